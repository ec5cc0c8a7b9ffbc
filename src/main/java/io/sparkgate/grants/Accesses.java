package io.sparkgate.grants;

import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.TempViews;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Every access to data a request's facts describe, with the privilege each needs, and what Sparkgate cannot
 * resolve with certainty. Read from the facts the inspector produced for the request (tables as Spark will
 * resolve them, paths with the scheme they reach), so SQL, DataFrames, Catalog RPCs and AnalyzePlan are read
 * alike. Anything this class does not know how to classify is unresolved: with grants in force it is refused,
 * never guessed.
 *
 * @param accesses each distinct access, in the order the facts name them
 * @param unresolved what could not be resolved, one short description each (the first is shown to the user)
 */
public record Accesses(List<Access> accesses, List<String> unresolved) {

  public Accesses {
    accesses = List.copyOf(accesses);
    unresolved = List.copyOf(unresolved);
  }

  /** Statement kinds and DataFrame save modes that change a table's rows. */
  private static final Set<String> MODIFIES =
      Set.of(
          "deletefromtable",
          "updatetable",
          "mergeintotable",
          "merge",
          "truncatetable",
          "loaddata",
          "insert_into",
          "stream",
          "write_v2_mode_append",
          "write_v2_mode_overwrite",
          "write_v2_mode_overwrite_partitions");

  /** Statement kinds that look after a table without changing its rows or definition. */
  private static final Set<String> MAINTAINS =
      Set.of(
          "cachetable",
          "uncachetable",
          "refreshtable",
          "analyze",
          "repairtable",
          "recoverpartitions");

  /** Path contexts that only read: a reader's paths and options, a file query, REFRESH of a path. */
  private static final Pattern READ_ONLY_PATH =
      Pattern.compile(
          "file_query|refresh_resource|DataSource(\\..*)?|add_(jar|file|archive)|create_function");

  /** Hadoop glob syntax Sparkgate does not expand: alternatives, character classes and escapes. */
  private static final Pattern UNCHECKABLE_PATH = Pattern.compile("[{}\\[\\]\\\\]");

  /** Catalog RPCs that read a table (or that it exists). */
  private static final Set<String> CATALOG_READS =
      Set.of("get_table", "table_exists", "list_columns", "is_cached");

  /** Catalog RPCs that look after a table. */
  private static final Set<String> CATALOG_MAINTAINS =
      Set.of("cache_table", "uncache_table", "refresh_table", "recover_partitions", "is_cached");

  /** Catalog RPCs and SQL statements that list or describe a namespace. */
  private static final Set<String> LISTINGS =
      Set.of(
          "list_tables",
          "get_database",
          "database_exists",
          "showtables",
          "showtableextended",
          "showviews",
          "describenamespace",
          "analyzetables");

  /** Catalog operations that touch no table data: config, functions, variables, the current namespace. */
  private static final Set<String> NO_DATA =
      Set.of(
          "current_database",
          "set_current_database",
          "current_catalog",
          "set_current_catalog",
          "list_catalogs",
          "list_databases",
          "list_functions",
          "get_function",
          "function_exists",
          "clear_cache",
          "drop_temp_view",
          "showcatalogs",
          "shownamespaces",
          "showcurrentnamespace",
          "showfunctions",
          "describefunction",
          "refreshfunction",
          "createvariable",
          "dropvariable",
          "setvariable");

  private static final String SESSION_CATALOG = "spark_catalog";
  private static final String GLOBAL_TEMP = "global_temp";
  private static final Pattern SIMPLE_NAME = Pattern.compile("[A-Za-z0-9_]+");

  /** Iceberg's metadata tables, read as {@code db.t.<name>}. */
  private static final Set<String> ICEBERG_METADATA =
      Set.of(
          "history",
          "metadata_log_entries",
          "snapshots",
          "entries",
          "position_deletes",
          "files",
          "data_files",
          "delete_files",
          "manifests",
          "partitions",
          "all_data_files",
          "all_delete_files",
          "all_files",
          "all_manifests",
          "all_entries",
          "refs");

  private static final Pattern ICEBERG_SELECTOR =
      Pattern.compile("(branch_|tag_|snapshot_id_|at_timestamp_).+", Pattern.CASE_INSENSITIVE);

  static boolean icebergMetadata(String name) {
    return ICEBERG_METADATA.contains(name.toLowerCase(Locale.ROOT))
        || ICEBERG_SELECTOR.matcher(name).matches();
  }

  /** Reads every access {@code facts} describe. */
  public static Accesses of(Facts facts) {
    Builder b = new Builder();
    b.hudiArgument =
        facts.any(Fact.Kind.TABLE_READ, f -> f.subkind().equals("table_function"))
            || facts.any(Fact.Kind.PATH, f -> "table_function_argument".equals(f.get("context")));
    // format.`path` is a file query: Spark reads the files (its PATH fact), not a table of that
    // name.
    Set<String> fileQueries = new HashSet<>();
    for (Fact f : facts.ofKind(Fact.Kind.PATH)) {
      if ("file_query".equals(f.get("context")) && f.get("path") != null)
        fileQueries.add(f.get("path"));
    }
    for (Fact f : facts.all()) {
      if ((f.kind() == Fact.Kind.TABLE_READ || f.kind() == Fact.Kind.TABLE_WRITE)
          && fileQueries.contains(f.get("name"))) {
        if (f.kind() == Fact.Kind.TABLE_WRITE) { // INSERT INTO format.`path` writes the files
          b.add(
              Access.path(
                  normalize(f.get("name").strip(), null), Privilege.MODIFY, f.get("where")));
        }
        continue;
      }
      if ("true".equals(f.get(TempViews.TEMP_VIEW))) {
        tempView(f, b);
        continue;
      }
      if (f.subkind().equals("procedure")
          && (f.kind() == Fact.Kind.TABLE_READ || f.kind() == Fact.Kind.TABLE_WRITE)) {
        procedureTable(f, b);
        continue;
      }
      switch (f.kind()) {
        case TABLE_READ -> b.table(f, Privilege.SELECT);
        case TABLE_WRITE -> tableWrite(f, b);
        case CATALOG_OP -> catalogOp(f, b);
        case PATH -> path(f, b);
        case FUNCTION_CALL -> function(f, b);
        default -> {}
      }
    }
    return new Accesses(List.copyOf(b.accesses.values()), b.unresolved);
  }

  /**
   * A session's temporary view: reading it reads what it read when it was created, checked again now (a grant
   * withdrawn since then counts); dropping it touches no data.
   */
  private static void tempView(Fact f, Builder b) {
    if (f.kind() == Fact.Kind.TABLE_WRITE) {
      if (!f.subkind().equals("dropView") && !f.subkind().equals("dropTable")) tableWrite(f, b);
      return;
    }
    String reads = f.get(TempViews.VIEW_READS);
    if (reads == null || reads.isEmpty()) return;
    for (String line : reads.split("\n")) {
      String[] p = line.split("\t", -1);
      if (p.length == 4 && p[0].equals("table")) {
        b.add(Access.table(p[1], p[2], p[3], Privilege.SELECT, f.get("where")));
      } else if (p.length == 4 && p[0].equals("path")) {
        b.path(p[1], p[2], p[3], true, f.get("where"));
      } else {
        b.unresolved.add("what the temporary view " + f.get("name") + " reads");
      }
    }
  }

  /** Spark's own table-valued functions: they make rows, reading no table. */
  private static final Set<String> TABLE_FREE_FUNCTIONS =
      Set.of(
          "range",
          "explode",
          "explode_outer",
          "inline",
          "inline_outer",
          "json_tuple",
          "posexplode",
          "posexplode_outer",
          "stack",
          "sql_keywords",
          "collations",
          "variant_explode",
          "variant_explode_outer");

  /**
   * The table an Iceberg procedure works on (the inspector reads its {@code table} argument as the procedure
   * does): reading its history needs select, anything else maintain. The reading holds only for a catalog
   * that is Iceberg's, as the server's profile states it.
   */
  private static void procedureTable(Fact f, Builder b) {
    String impl = f.get("catalog_impl");
    if (impl == null || !impl.toLowerCase(Locale.ROOT).contains("iceberg")) {
      b.unresolved.add(
          "the procedure " + f.get("procedure") + " in a catalog not known as Iceberg's");
    } else {
      b.table(f, f.kind() == Fact.Kind.TABLE_READ ? Privilege.SELECT : Privilege.MAINTAIN);
    }
  }

  /**
   * A table-valued function other than Spark's own may read any table (Hudi's read the one their first
   * argument names: a TABLE_READ or PATH fact of its own when it is a literal); a procedure takes its tables
   * as strings whose meaning is the procedure's. Neither can be checked with certainty unless the inspector
   * read it.
   */
  private static void function(Fact f, Builder b) {
    String name = f.get("name") == null ? "" : f.get("name").toLowerCase(Locale.ROOT);
    if (f.subkind().equals("procedure")) {
      // An Iceberg table procedure's table is a fact of its own (procedureTable); any other
      // reaches data the inspector cannot name.
      if (!"resolved".equals(f.get("table_argument"))) b.unresolved.add("the procedure " + name);
    } else if (f.subkind().equals("table_valued")
        && !TABLE_FREE_FUNCTIONS.contains(name)
        && !(name.startsWith("hudi_") && b.hudiArgument)) {
      b.unresolved.add("the table function " + name);
    }
  }

  private static void tableWrite(Fact f, Builder b) {
    if ("true".equals(f.get("temporary")))
      return; // a session's own view: its body's reads are checked
    String kind = f.subkind().toLowerCase(Locale.ROOT);
    Set<Privilege> needs = EnumSet.noneOf(Privilege.class);
    if (kind.startsWith("insert") || kind.endsWith("insertquery") || MODIFIES.contains(kind)) {
      needs.add(Privilege.MODIFY);
    } else if (MAINTAINS.contains(kind) || kind.startsWith("hudi.")) {
      needs.add(Privilege.MAINTAIN);
    } else if (kind.equals("renametabletarget")) {
      needs.add(Privilege.CREATE);
    } else if (kind.equals("save_as_table") || kind.equals("write_v2_mode_create")) {
      needs.add(Privilege.CREATE);
      needs.add(Privilege.MODIFY);
    } else if (kind.equals("write_v2_mode_replace")
        || kind.equals("write_v2_mode_create_or_replace")
        || kind.equals("replacetable")
        || kind.equals("replacetableheader")) {
      needs.addAll(EnumSet.of(Privilege.CREATE, Privilege.DROP, Privilege.MODIFY));
    } else if (kind.startsWith("create")) {
      needs.add(Privilege.CREATE); // a table, table like, view, index; with AS, its rows too
      if ("true".equals(f.get("or_replace"))) needs.add(Privilege.DROP);
    } else if (kind.equals("droptable") || kind.equals("dropview")) {
      needs.add(Privilege.DROP);
    } else if (kind.equals("droptablepartitions")) {
      needs.add(Privilege.ALTER);
      needs.add(Privilege.MODIFY); // its rows go with it
    } else if (kind.startsWith("alter")
        || kind.startsWith("rename")
        || kind.startsWith("add")
        || kind.startsWith("set")
        || kind.startsWith("unset")
        || kind.startsWith("comment")
        || kind.startsWith("hive")
        || kind.startsWith("drop")
        || kind.startsWith("iceberg.")) {
      needs.add(Privilege.ALTER);
    } else {
      b.unresolved.add("a table change Sparkgate does not classify (" + f.subkind() + ")");
      return;
    }
    for (Privilege p : needs) b.table(f, p);
  }

  private static void catalogOp(Fact f, Builder b) {
    String op = f.subkind().toLowerCase(Locale.ROOT);
    if (NO_DATA.contains(op)
        || op.contains("function")
        || op.contains("variable")
        || op.equals("persist")
        || op.equals("unpersist")
        || op.equals("refresh_by_path") // its path is a PATH fact
        || op.startsWith("show") && !LISTINGS.contains(op)) {
      return; // no data by itself; a SHOW that names a table reads it (a TABLE_READ)
    }
    if (op.equals("create_global_temp_view")
        || op.equals("drop_global_temp_view")
        || op.equals("create_temp_view") && "true".equals(f.get("global"))) {
      // Every session reads a global temporary view: it is a table of the global temp database.
      String name = f.get(op.startsWith("drop") ? "view_name" : "name");
      if (name == null || !SIMPLE_NAME.matcher(name).matches()) {
        b.unresolved.add("the global temporary view " + name);
      } else {
        Privilege p = op.startsWith("drop") ? Privilege.DROP : Privilege.CREATE;
        b.add(Access.table(SESSION_CATALOG, GLOBAL_TEMP, name, p, f.get("where")));
      }
    } else if (op.equals("create_temp_view")) {
      return; // a session's own view: its plan's reads are checked
    } else if (CATALOG_READS.contains(op)) {
      b.table(f, Privilege.SELECT);
    } else if (CATALOG_MAINTAINS.contains(op)) {
      if (f.get("source") != null && f.get("source").equals("sql")) return; // a TABLE_WRITE too
      b.table(f, Privilege.MAINTAIN);
    } else if (op.equals("create_table") || op.equals("create_external_table")) {
      b.table(f, Privilege.CREATE);
      b.table(f, Privilege.MODIFY); // a table over existing files, or an empty one to write
    } else if (LISTINGS.contains(op)) {
      b.namespace(f, Access.Target.NAMESPACE_LISTING, Privilege.SELECT);
    } else if (op.equals("createnamespace")) {
      b.namespace(f, Access.Target.NAMESPACE, Privilege.CREATE);
    } else if (op.equals("dropnamespace")) {
      b.namespace(f, Access.Target.NAMESPACE, Privilege.DROP);
    } else if (op.endsWith("namespaceproperties")
        || op.equals("setnamespacelocation")
        || op.equals("commentnamespace")) {
      b.namespace(f, Access.Target.NAMESPACE, Privilege.ALTER);
    } else {
      b.unresolved.add("a catalog operation Sparkgate does not classify (" + f.subkind() + ")");
    }
  }

  private static void path(Fact f, Builder b) {
    String written = f.get("path");
    if (written == null) return;
    String context = f.get("context") == null ? "" : f.get("context");
    b.path(
        written,
        f.get("scheme"),
        f.subkind(),
        READ_ONLY_PATH.matcher(context).matches(),
        f.get("where"));
  }

  /**
   * A path as grants match it: a path without a scheme gets the one it reaches ({@code /data/x} on the local
   * file system is {@code file:///data/x}), and {@code file:/x} is written {@code file:///x}.
   */
  static String normalize(String path, String scheme) {
    if (path.startsWith("/")) return (scheme == null ? "file" : scheme) + "://" + path;
    int colon = path.indexOf(':');
    if (colon > 0
        && path.length() > colon + 1
        && path.charAt(colon + 1) == '/'
        && (path.length() == colon + 2 || path.charAt(colon + 2) != '/')) {
      return path.substring(0, colon) + "://" + path.substring(colon + 1);
    }
    return path;
  }

  /** Collects accesses once each. */
  private static final class Builder {
    /** By what is accessed and how, not where: a table read in two places is one access. */
    final Map<Access.Key, Access> accesses = new LinkedHashMap<>();

    final List<String> unresolved = new ArrayList<>();

    /** Whether a Hudi table function's first argument was read as a table or a path. */
    boolean hudiArgument;

    /** Adds {@code a} once; what one place needs for certain outweighs an alternative elsewhere. */
    void add(Access a) {
      accesses.merge(a.key(), a, (old, now) -> old.alternative() && !now.alternative() ? now : old);
    }

    void table(Fact f, Privilege p) {
      String catalog = f.get("catalog");
      String name = f.get("name");
      if (catalog == null || name == null) {
        unresolved.add("a table named in " + f.kind() + "[" + f.subkind() + "]");
        return;
      }
      String namespace = f.get("database") == null ? "" : f.get("database");
      String impl = f.get("catalog_impl");
      String where = f.get("where");
      if (impl == null
          || !impl.toLowerCase(Locale.ROOT).contains("iceberg")
          || namespace.isEmpty()
          || !icebergMetadata(name)
          || creates(f)) {
        add(Access.table(catalog, namespace, name, p, where));
        return;
      }
      // db.t.snapshots, db.t.branch_dev: Iceberg loads a table of that very name if there is one,
      // else
      // t's metadata or branch. Which one the catalog holds is not known here, so both are checked:
      // the
      // usual meaning as any access, the other wherever a grant covers it. With a one-part
      // namespace
      // (finance.history) the usual meaning is the table itself, its "parent" a table in the root.
      int dot = namespace.lastIndexOf('.');
      Access self = Access.table(catalog, namespace, name, p, where);
      Access parent =
          Access.table(
              catalog,
              dot < 0 ? "" : namespace.substring(0, dot),
              namespace.substring(dot + 1),
              p,
              where);
      Access usual = dot < 0 ? self : parent;
      Access other = dot < 0 ? parent : self;
      add(usual);
      add(
          new Access(
              other.target(), other.catalog(), other.namespace(), other.name(), p, where, usual));
    }

    /** A statement that makes the table: the name is the new table's, never a metadata table's. */
    private static boolean creates(Fact f) {
      if (f.kind() != Fact.Kind.TABLE_WRITE) return false;
      String kind = f.subkind().toLowerCase(Locale.ROOT);
      return kind.startsWith("create")
          || kind.startsWith("replace")
          || kind.startsWith("write_v2_mode_create")
          || kind.equals("write_v2_mode_replace")
          || kind.equals("save_as_table")
          || kind.equals("renametabletarget");
    }

    /** A path as a PATH fact describes it ({@code kind} its subkind); a read-only one needs select alone. */
    void path(String written, String scheme, String kind, boolean readOnly, String where) {
      if (kind.equals("relative") || kind.equals("parent_ref")) {
        unresolved.add("the path '" + written + "' (a relative path or one with '..')");
        return;
      }
      if (UNCHECKABLE_PATH.matcher(written).find()) {
        unresolved.add("the path '" + written + "' (a glob with {, [ or \\)");
        return;
      }
      String path = normalize(written.strip(), scheme);
      add(Access.path(path, Privilege.SELECT, where));
      if (!readOnly) add(Access.path(path, Privilege.MODIFY, where));
    }

    void namespace(Fact f, Access.Target target, Privilege p) {
      String catalog = f.get("ns_catalog");
      if (catalog == null) {
        unresolved.add("the namespace of " + f.subkind());
        return;
      }
      add(new Access(target, catalog, f.get("namespace"), "", p, f.get("where")));
    }
  }
}
