package io.sparkgate.inspect;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.antlr.v4.runtime.ParserRuleContext;
import org.apache.spark.sql.catalyst.parser.SqlBaseParser;

/**
 * The statement kinds Sparkgate knows, each with its class and a description (statement-kinds.tsv beside this
 * class, rendered as docs/statement-kinds.md). Explicit so that a grammar alternative added by a new Spark
 * release is an unknown kind, refused, rather than a new name no policy has heard of.
 */
final class StatementKinds {
  /** The classes of statements, in the order documented. */
  static final List<String> CLASSES = List.of("read", "write", "ddl", "session", "admin", "script");

  static final String RESOURCE = "statement-kinds.tsv";

  /** The grammar rule whose alternatives are forms of an INSERT (attribute {@code insert}), not statements. */
  static final String INSERT_RULE = "insertInto";

  /**
   * One row: {@code grammar} is {@code rule#label} of the alternative in SqlBaseParser.g4, or a rule name for
   * a rule without labels.
   */
  record Kind(String name, String kindClass, String grammar, String description) {
    boolean isInsertForm() {
      return grammar.startsWith(INSERT_RULE + "#");
    }
  }

  /** What the SQL fact of one statement says (null attributes are left out), and the kinds not in the table. */
  record Reading(String kind, String kindClass, String insert, List<String> unknown) {}

  /** The table the inspector uses, read once from {@link #RESOURCE}. */
  static final StatementKinds TABLE = new StatementKinds(load());

  private final Map<String, Kind> kinds;

  StatementKinds(Map<String, Kind> kinds) {
    this.kinds = Map.copyOf(kinds);
  }

  /** The statement kind of that name, or null (also for the INSERT forms, which are not statements). */
  Kind of(String name) {
    Kind k = kinds.get(name);
    return k == null || k.isInsertForm() ? null : k;
  }

  /** Reads a parsed top-level statement, a scripting block (compound) or a single statement. */
  Reading read(SqlBaseParser.CompoundOrSingleStatementContext tree) {
    var single = tree.singleStatement();
    return read(SqlInspector.statementKind(tree), single == null ? null : single.statement());
  }

  /** Reads a statement inside another (in a block, EXPLAIN's subject): its own kind, as at the top. */
  Reading nested(ParserRuleContext statement) {
    return read(SqlInspector.kindOf(statement), statement);
  }

  private Reading read(String kind, ParserRuleContext statement) {
    Kind known = of(kind);
    List<String> unknown = new ArrayList<>();
    if (known == null) unknown.add(kind);
    Set<String> forms = new LinkedHashSet<>();
    if (statement instanceof SqlBaseParser.DmlStatementContext dml) {
      for (SqlBaseParser.InsertIntoContext into : inserts(dml.dmlStatementNoWith())) {
        String form = SqlInspector.kindOf(into);
        Kind k = kinds.get(form);
        if ((k == null || !k.isInsertForm()) && !unknown.contains(form)) unknown.add(form);
        forms.add(form);
      }
    }
    String insert = forms.isEmpty() ? null : String.join(",", forms);
    return new Reading(
        kind, known == null ? null : known.kindClass(), insert, List.copyOf(unknown));
  }

  /** The UNCLASSIFIED facts of the kinds not in the table: a kind no policy was written for is refused. */
  static void reportUnknown(Reading reading, String where, FactSink sink) {
    for (String kind : reading.unknown()) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "unknown_statement_kind")
          .put("where", where)
          .put("kind", kind)
          .emit();
    }
  }

  private static List<SqlBaseParser.InsertIntoContext> inserts(
      SqlBaseParser.DmlStatementNoWithContext dml) {
    if (dml instanceof SqlBaseParser.SingleInsertQueryContext single)
      return List.of(single.insertInto());
    List<SqlBaseParser.InsertIntoContext> out = new ArrayList<>();
    if (dml instanceof SqlBaseParser.MultiInsertQueryContext multi) {
      for (var body : multi.multiInsertQueryBody()) out.add(body.insertInto());
    }
    return out;
  }

  /** Every row of {@link #RESOURCE}, statement kinds and INSERT forms, by name in the file's order. */
  static Map<String, Kind> load() {
    try (InputStream in = StatementKinds.class.getResourceAsStream(RESOURCE)) {
      if (in == null) throw new IllegalStateException(RESOURCE + " is missing from the classpath");
      return parse(
          new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)).lines().toList());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + RESOURCE, e);
    }
  }

  /** The table from its lines; a malformed line is an error naming the line, so a bad edit fails at once. */
  static Map<String, Kind> parse(List<String> lines) {
    Map<String, Kind> kinds = new LinkedHashMap<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (line.isBlank() || line.startsWith("#")) continue;
      String[] f = line.split("\t", -1);
      String where = RESOURCE + " line " + (i + 1) + ": ";
      if (f.length != 4)
        throw new IllegalStateException(where + "expected 4 tab-separated fields, got " + f.length);
      for (String field : f) {
        if (field.isBlank()) throw new IllegalStateException(where + "empty field");
      }
      if (!CLASSES.contains(f[1]))
        throw new IllegalStateException(where + "class must be one of " + CLASSES);
      if (kinds.put(f[0], new Kind(f[0], f[1], f[2], f[3])) != null) {
        throw new IllegalStateException(where + "kind " + f[0] + " listed twice");
      }
    }
    return kinds;
  }
}
