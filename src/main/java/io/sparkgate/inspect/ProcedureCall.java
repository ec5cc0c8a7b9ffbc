package io.sparkgate.inspect;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a CALL reaches, read the same way whichever grammar read the statement. Every call is a FUNCTION_CALL
 * {@code procedure}. For Iceberg's table procedures, whose parameters are known, it is also the table their
 * {@code table} argument names, resolved as the procedure resolves it (a TABLE_WRITE or TABLE_READ of subkind
 * {@code procedure}; the call then carries {@code table_argument=resolved}), and the filter their {@code
 * where} argument holds, an expression the session's parser reads (as is the {@code filter} of Hudi's
 * procedures). Any other call leaves the data it reaches unknown, which grants refuse. Every other string
 * argument is checked for what substitution would rewrite: procedures hand theirs to the session's parser.
 */
final class ProcedureCall {

  /**
   * One argument as written: its name, empty when positional, and its value when that is a plain string.
   *
   * @param literal the string value, or null for anything else (numbers, maps, computed values)
   */
  record Argument(String key, String literal, String written) {}

  /** A procedure's parameters in order (the first is always {@code table}), and whether it only reads. */
  private record Signature(List<String> parameters, boolean reads) {
    int position(String parameter) {
      return parameters.indexOf(parameter);
    }
  }

  /**
   * Iceberg's procedures that work on one table, with their parameters as iceberg-spark 1.10 (3.5 and 4.0)
   * declares them. Those that create tables or views, or read files or other tables (snapshot, migrate,
   * add_files, register_table, create_changelog_view, rewrite_table_path), are not here.
   */
  private static final Map<String, Signature> ICEBERG =
      Map.ofEntries(
          maintains("rewrite_data_files", "strategy", "sort_order", "options", "where"),
          maintains("rewrite_manifests", "use_caching", "spec_id"),
          maintains("rewrite_position_delete_files", "options", "where"),
          maintains(
              "expire_snapshots",
              "older_than",
              "retain_last",
              "max_concurrent_deletes",
              "stream_results",
              "snapshot_ids",
              "clean_expired_metadata"),
          maintains(
              "remove_orphan_files",
              "older_than",
              "location",
              "dry_run",
              "max_concurrent_deletes",
              "file_list_view"),
          maintains("rollback_to_snapshot", "snapshot_id"),
          maintains("rollback_to_timestamp", "timestamp"),
          maintains("set_current_snapshot", "snapshot_id", "ref"),
          maintains("cherrypick_snapshot", "snapshot_id"),
          maintains("fast_forward", "branch", "to"),
          maintains("publish_changes", "wap_id"),
          maintains("compute_table_stats", "snapshot_id", "columns"),
          maintains("compute_partition_stats", "snapshot_id"),
          Map.entry("ancestors_of", new Signature(List.of("table", "snapshot_id"), true)));

  /** A parameter naming other data the procedure reads (remove_orphan_files' list of files, a view). */
  private static final String OTHER_DATA = "file_list_view";

  private ProcedureCall() {}

  private static Map.Entry<String, Signature> maintains(String name, String... parameters) {
    List<String> all = new ArrayList<>(List.of("table"));
    all.addAll(List.of(parameters));
    return Map.entry(name, new Signature(List.copyOf(all), false));
  }

  /**
   * Reports a call of the procedure {@code parts} with {@code arguments}.
   *
   * @param written the procedure's name as written
   */
  static void report(
      List<String> parts,
      String written,
      List<Argument> arguments,
      SqlScope scope,
      SqlInspector inspector,
      FactSink sink,
      String where) {
    String name = String.join(".", parts).toLowerCase(Locale.ROOT);
    TableRef procedure = scope.resolve(parts);
    Signature signature =
        procedure.database().equalsIgnoreCase("system")
            ? ICEBERG.get(procedure.name().toLowerCase(Locale.ROOT))
            : null;
    List<Argument> read = new ArrayList<>();
    if (signature != null)
      read.addAll(filters(signature, arguments, scope, inspector, sink, where));
    if (scope.session.extensions().contains(ExtensionSql.HUDI)) {
      read.addAll(hudiFilters(arguments, scope, inspector, sink, where));
    }
    Argument tableArgument = signature == null ? null : only(signature, arguments, "table");
    TableRef table =
        tableArgument == null
            ? null
            : table(
                signature,
                procedure,
                tableArgument,
                arguments,
                scope,
                inspector,
                sink,
                where,
                read);
    for (Argument a : arguments) {
      if (a.literal() != null && !read.contains(a))
        inspector.procedureString(a.literal(), where, scope.session, sink);
    }
    sink.fact(Fact.Kind.FUNCTION_CALL, "procedure")
        .put("name", name)
        .put("written", written)
        .put("where", where)
        .put("table_argument", table == null ? null : "resolved")
        .emit();
    if (table == null) return;
    FactSink.Builder fact =
        sink.fact(signature.reads() ? Fact.Kind.TABLE_READ : Fact.Kind.TABLE_WRITE, "procedure");
    table.addTo(fact);
    fact.put("procedure", name)
        .put("written", tableArgument.written())
        .put("source", "procedure")
        .put("where", where)
        .emit();
  }

  /**
   * The table the call works on, or null when it cannot be told for certain. Iceberg's BaseProcedure reads
   * the {@code table} string with the session parser's parseMultipartIdentifier and resolves it in the
   * procedure's catalog (Spark3Util.catalogAndIdentifier): a first part that is a registered catalog names
   * it (the procedure then refuses any catalog but its own), one part is in the current namespace when the
   * procedure's catalog is the current one and in the catalog's default namespace otherwise (not known
   * here). With Hudi's extension loaded, Hudi's parser takes every CALL and runs its own procedure by the
   * last part of the name, so no Iceberg reading holds.
   */
  private static TableRef table(
      Signature signature,
      TableRef procedure,
      Argument table,
      List<Argument> arguments,
      SqlScope scope,
      SqlInspector inspector,
      FactSink sink,
      String where,
      List<Argument> read) {
    if (scope.session.extensions().contains(ExtensionSql.HUDI)) return null;
    if (!candidates(signature, arguments, OTHER_DATA).isEmpty()) return null;
    if (table.literal() == null) return null;
    read.add(table); // the session parser's reading checks it for substitution
    List<String> parts = inspector.sessionIdentifier(table.literal(), where, scope.session, sink);
    if (parts == null || parts.isEmpty()) return null;
    if (parts.size() == 1) {
      if (!procedure.catalog().equals(scope.catalog())) return null;
      return new TableRef(procedure.catalog(), scope.database(), parts.get(0));
    }
    return TableRef.resolve(parts, procedure.catalog(), scope.database(), scope.session);
  }

  /**
   * The {@code where} filter of a rewrite: Iceberg parses it with the session's parser
   * (SparkExpressionConverter.collectResolvedSparkExpression), so it is read as an expression string. A value
   * that is not a plain string is computed at run time and cannot be read.
   */
  private static List<Argument> filters(
      Signature signature,
      List<Argument> arguments,
      SqlScope scope,
      SqlInspector inspector,
      FactSink sink,
      String where) {
    if (signature.position("where") < 0) return List.of();
    List<Argument> filters = candidates(signature, arguments, "where");
    filters.forEach(f -> expression(f, scope, inspector, sink, where));
    return filters;
  }

  /**
   * Hudi's show_* procedures take a {@code filter}, which HoodieProcedureFilterUtils parses with the
   * session's parser and evaluates on each row: an expression string like any other.
   */
  private static List<Argument> hudiFilters(
      List<Argument> arguments,
      SqlScope scope,
      SqlInspector inspector,
      FactSink sink,
      String where) {
    List<Argument> filters = new ArrayList<>(1);
    for (Argument a : arguments) {
      if (!a.key().equalsIgnoreCase("filter")) continue;
      expression(a, scope, inspector, sink, where);
      filters.add(a);
    }
    return filters;
  }

  /** An argument the procedure parses as an expression; one computed at run time cannot be read. */
  private static void expression(
      Argument a, SqlScope scope, SqlInspector inspector, FactSink sink, String where) {
    if (a.literal() == null) {
      sink.unclassified("computed_argument", where, "CALL argument " + a.written());
    } else {
      inspector.expression(a.literal(), where, scope.session, sink);
    }
  }

  /** The one argument for {@code parameter}, or null when there is none or more than one. */
  private static Argument only(Signature signature, List<Argument> arguments, String parameter) {
    List<Argument> found = candidates(signature, arguments, parameter);
    return found.size() == 1 ? found.get(0) : null;
  }

  /**
   * The arguments that may be {@code parameter}'s: by name in any case (which finds at least what the
   * procedure does) or by position. More than one is ambiguous: the procedure refuses the call, and callers
   * either take none of them or check them all.
   */
  private static List<Argument> candidates(
      Signature signature, List<Argument> arguments, String parameter) {
    int position = signature.position(parameter);
    List<Argument> found = new ArrayList<>(1);
    int positional = 0;
    for (Argument a : arguments) {
      boolean match =
          a.key().isEmpty() ? positional++ == position : a.key().equalsIgnoreCase(parameter);
      if (match) found.add(a);
    }
    return found;
  }
}
