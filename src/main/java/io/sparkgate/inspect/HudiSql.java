package io.sparkgate.inspect;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Hudi's own statements (compaction, CALL, index statements), read with Hudi's own grammars ({@link HudiGrammar})
 * the way HoodieSparkSessionExtension's parser takes them: HoodieCommonSqlParser reads every statement with
 * HoodieSqlCommon and keeps compaction and CALL; whatever that grammar reads as {@code passThrough} goes to
 * HoodieSpark3_5ExtendedSqlParser, which reads text that mentions an index statement, time travel, blob or
 * vector (isHoodieCommand) with HoodieSqlBase, and the rest goes on to Iceberg's or Spark's parser.
 */
final class HudiSql {
  static final String EXTENSION = "hudi";

  /**
   * Every statement alternative of the two grammars Hudi reads as its own, and what it does; HudiSqlTest keeps
   * it complete together with {@link #HANDED_ON}.
   */
  static final Map<String, ExtensionSql.Kind> STATEMENTS =
      Map.ofEntries(
          row("compactionOnTable", "admin"),
          row("compactionOnPath", "admin"),
          row("showCompactionOnTable", "read"),
          row("showCompactionOnPath", "read"),
          row("call", "admin"),
          row("createIndex", "ddl"),
          row("dropIndex", "ddl"),
          row("showIndexes", "read"),
          row("refreshIndex", "ddl"));

  /**
   * The statement alternatives not read here, converted without their insides: {@code passThrough} hands the
   * text to the next parser, and the rest are Spark's own statements in Hudi's copy of Spark's grammar (its
   * time-travel and vector forms), which Spark's grammar reads before any extension's is tried: text only
   * Hudi's copy reads stays unparseable, so refused. ({@code compactionCommand} only wraps the compaction
   * alternatives.)
   */
  static final Set<String> HANDED_ON =
      Set.of("passThrough", "queryStatement", "dmlStatement", "createTable");

  /**
   * The kinds Spark's grammar gives text Hudi's parser takes first with another meaning (ExtensionSql
   * .readBeforeSpark): {@code SHOW INDEXES} and {@code REFRESH INDEX}.
   */
  static final Set<String> SPARK_KINDS_TAKEN = Set.of("failNativeCommand", "refreshResource");

  /** What HoodieSpark3_5ExtendedSqlParser.isHoodieCommand looks for in the normalised text. */
  private static final List<String> EXTENDED_PHRASES =
      List.of(
          "system_time as of",
          "timestamp as of",
          "system_version as of",
          "version as of",
          "create index",
          "drop index",
          "show indexes",
          "refresh index",
          " blob",
          " vector");

  private HudiSql() {}

  private static Map.Entry<String, ExtensionSql.Kind> row(
      String alternative, String statementClass) {
    return Map.entry(
        alternative, new ExtensionSql.Kind(EXTENSION + "." + alternative, statementClass));
  }

  /** Reports the statement and returns true if Hudi's parser would read it as its own; otherwise emits nothing. */
  static boolean read(
      String sql,
      String origin,
      String where,
      SqlScope scope,
      SqlInspector inspector,
      FactSink sink) {
    GrammarTree statement = statement(sql);
    if (statement == null) return false;
    ExtensionSql.Kind kind = STATEMENTS.get(statement.name());
    if (kind == null) return false;
    GrammarTree table = statement.child("tableIdentifier");
    List<String> parts = table == null ? null : tableParts(table);
    if (table != null && parts == null) return false;
    FactSink.Builder fact = ExtensionSql.statement(sink, kind, sql, origin, where, EXTENSION);
    details(statement, fact);
    fact.emit();
    String fs = scope.session.defaultFileSystem();
    if (statement.is("call")) {
      GrammarTree name = statement.child("multipartIdentifier");
      List<ProcedureCall.Argument> arguments = new ArrayList<>();
      GrammarTree list = statement.child("callArgumentList");
      if (list != null)
        for (GrammarTree argument : list.children("callArgument"))
          arguments.add(argument(argument, sink, where, fs));
      ProcedureCall.report(
          identifiers(name.children("identifier")),
          name.text(),
          arguments,
          scope,
          inspector,
          sink,
          where);
      return true;
    }
    if (statement.name().endsWith("OnPath")) {
      // The table by its base path (path = STRING): a path however it is written.
      LocalPaths.report(
          sink, SqlText.unescapeString(statement.child("STRING").text()), "table_path", where, fs);
      return true;
    }
    boolean reads = kind.statementClass().equals("read");
    ExtensionSql.table(
            sink,
            reads ? Fact.Kind.TABLE_READ : Fact.Kind.TABLE_WRITE,
            reads ? "sql" : kind.name(),
            scope.resolve(parts),
            table.text(),
            table.start(),
            table.end(),
            where,
            EXTENSION)
        .put("statement", reads ? kind.name() : null)
        .emit();
    for (GrammarTree options : statement.all("propertyList")) {
      for (GrammarTree property : options.children("property")) option(property, sink, where, fs);
    }
    return true;
  }

  /**
   * The statement alternative Hudi's parsers take as their own, or null. A text HoodieSqlCommon refuses is
   * refused by Hudi's parser itself, before any other parser sees it.
   */
  static GrammarTree statement(String sql) {
    GrammarTree common = HudiGrammar.COMMON.parse(sql, HANDED_ON);
    if (common == null) return null;
    GrammarTree statement = common.child(0);
    if (statement.is("compactionCommand")) return statement.child(0);
    if (statement.is("call")) return statement;
    if (!extendedCommand(sql)) return null;
    GrammarTree base = HudiGrammar.BASE.parse(sql, HANDED_ON);
    return base == null ? null : base.child(0);
  }

  /** isHoodieCommand: the text lower-cased, trimmed and each run of whitespace one space, contains a phrase. */
  static boolean extendedCommand(String sql) {
    String s = sql.toLowerCase(Locale.ROOT).trim();
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (!ExtensionSql.isSpace(c)) {
        b.append(c);
      } else if (i == 0 || !ExtensionSql.isSpace(s.charAt(i - 1))) {
        b.append(' ');
      }
    }
    String n = b.toString();
    for (String phrase : EXTENDED_PHRASES) if (n.contains(phrase)) return true;
    return false;
  }

  /** What the statement says besides its table: compaction's operation, the index it names. */
  private static void details(GrammarTree statement, FactSink.Builder fact) {
    GrammarTree first = statement.child(0);
    if (statement.name().startsWith("compactionOn"))
      fact.put("operation", first.text().toLowerCase(Locale.ROOT));
    if (statement.name().endsWith("Index")) {
      fact.put("index", SqlText.unquoteIdentifier(statement.child("identifier").text()));
    }
  }

  /**
   * HoodieSqlCommon's {@code (db=IDENTIFIER '.')? table=IDENTIFIER}, or HoodieSqlBase's with
   * errorCapturingIdentifiers; null for an identifier with dashes (errorIdent), which Hudi refuses.
   */
  private static List<String> tableParts(GrammarTree table) {
    if (!table.all("errorIdent").isEmpty()) return null;
    List<String> parts = new ArrayList<>();
    for (GrammarTree part : table.children())
      if (!part.is("DOT")) parts.add(SqlText.unquoteIdentifier(part.text()));
    return parts;
  }

  private static List<String> identifiers(List<GrammarTree> ids) {
    return ids.stream().map(id -> SqlText.unquoteIdentifier(id.text())).toList();
  }

  /** One argument of a CALL ({@code expression} is a constant or MAP(...)), checked as ExtensionSql.argument says. */
  private static ProcedureCall.Argument argument(
      GrammarTree argument, FactSink sink, String where, String fs) {
    GrammarTree name = argument.child("identifier");
    String key = name == null ? "" : SqlText.unquoteIdentifier(name.text());
    GrammarTree value = argument.child("expression");
    GrammarTree map = value.child("stringMap");
    List<GrammarTree> constants =
        map != null ? map.children("constant") : value.children("constant");
    String literal =
        map == null && constants.get(0).is("stringLiteral") ? string(constants.get(0)) : null;
    List<String> strings = new ArrayList<>();
    for (GrammarTree c : constants) strings.add(string(c));
    ExtensionSql.argument(sink, key, literal, strings, map != null, argument.text(), where, fs);
    return new ProcedureCall.Argument(key, literal, argument.text());
  }

  /** A constant's string value (adjacent literals are one string), or null for numbers and booleans. */
  private static String string(GrammarTree constant) {
    if (!constant.is("stringLiteral") && !constant.is("typeConstructor")) return null;
    StringBuilder b = new StringBuilder();
    for (GrammarTree t : constant.children("STRING")) b.append(SqlText.unescapeString(t.text()));
    return b.toString();
  }

  /** An index's or an indexed column's OPTIONS entry: paths and dotted keys, as for Spark's CREATE INDEX. */
  private static void option(GrammarTree property, FactSink sink, String where, String fs) {
    GrammarTree key = property.child("propertyKey");
    GrammarTree value = property.child("propertyValue");
    String k =
        key.child("STRING") != null
            ? SqlText.unescapeString(key.child("STRING").text())
            : String.join(".", identifiers(key.children("identifier")));
    String v =
        value == null
            ? ""
            : value.child("STRING") != null
                ? SqlText.unescapeString(value.child("STRING").text())
                : value.text();
    OptionFacts.option(sink, k, v, "options", where, fs);
  }
}
