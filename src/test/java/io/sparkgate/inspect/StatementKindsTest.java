package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.antlr.v4.runtime.ParserRuleContext;
import org.apache.spark.sql.catalyst.parser.SqlBaseParser;
import org.junit.jupiter.api.Test;

final class StatementKindsTest {
  /** The grammar rules whose labelled alternatives are statement kinds (or, insertInto, INSERT forms). */
  private static final List<Class<? extends ParserRuleContext>> RULES =
      List.of(
          SqlBaseParser.StatementContext.class,
          SqlBaseParser.SetResetStatementContext.class,
          SqlBaseParser.DmlStatementNoWithContext.class,
          SqlBaseParser.InsertIntoContext.class,
          SqlBaseParser.SetStatementInsideSqlScriptContext.class);

  /** Where the generated part of docs/statement-kinds.md starts and ends. */
  static final String BEGIN =
      "<!-- generated from src/main/resources/io/sparkgate/inspect/statement-kinds.tsv by "
          + "StatementKindsTest: edit the file, not this table -->";

  static final String END = "<!-- end of generated table -->";

  private final Inspector inspector = new Inspector();
  private final SqlParsing parsing = new SqlParsing(SqlParserFlags.SPARK_4_0_DEFAULTS, 1024);

  /**
   * Every labelled alternative of the grammar, as {@code rule#label}, with the kind name the inspector gives
   * it (by calling {@link SqlInspector#kindOf} on an instance, so the names are the inspector's own).
   */
  static Map<String, String> grammarAlternatives() throws ReflectiveOperationException {
    Map<String, String> out = new TreeMap<>();
    for (Class<?> c : SqlBaseParser.class.getDeclaredClasses()) {
      Class<?> rule = c.getSuperclass();
      if (!RULES.contains(rule)) continue;
      if (c == SqlBaseParser.DmlStatementContext.class)
        continue; // named by its dmlStatementNoWith alternative
      Object parent = rule.getConstructor(ParserRuleContext.class, int.class).newInstance(null, 0);
      ParserRuleContext alternative =
          (ParserRuleContext) c.getConstructor(rule).newInstance(parent);
      out.put(label(rule) + "#" + label(c), SqlInspector.kindOf(alternative));
    }
    return out;
  }

  private static String label(Class<?> context) {
    String n =
        context.getSimpleName().substring(0, context.getSimpleName().length() - "Context".length());
    return Character.toLowerCase(n.charAt(0)) + n.substring(1);
  }

  @Test
  void table_names_every_grammar_alternative_and_nothing_else()
      throws ReflectiveOperationException {
    Map<String, String> grammar = grammarAlternatives();
    // Scripting blocks are a rule of their own (no labels); the inspector calls them compound.
    grammar.put("singleCompoundStatement", "compound");
    assertEquals(
        SqlBaseParser.class,
        SqlBaseParser.SingleCompoundStatementContext.class.getDeclaringClass());

    Map<String, StatementKinds.Kind> byGrammar = new LinkedHashMap<>();
    for (StatementKinds.Kind k : StatementKinds.load().values()) byGrammar.put(k.grammar(), k);
    List<String> problems = new ArrayList<>();
    grammar.forEach(
        (alternative, kind) -> {
          StatementKinds.Kind row = byGrammar.get(alternative);
          if (row == null) {
            problems.add(
                "missing from statement-kinds.tsv: " + alternative + " (kind " + kind + ")");
          } else if (!row.name().equals(kind)) {
            problems.add(
                alternative
                    + " is listed as "
                    + row.name()
                    + " but the inspector names it "
                    + kind);
          }
        });
    for (String alternative : byGrammar.keySet()) {
      if (!grammar.containsKey(alternative))
        problems.add("no longer in the grammar: " + alternative);
    }
    if (!problems.isEmpty()) fail(String.join("\n", problems));
    // The three names that are not their label, which policies already use.
    assertEquals("query", grammar.get("statement#statementDefault"));
    assertEquals("executeImmediate", grammar.get("statement#visitExecuteImmediate"));
    assertEquals("singleInsertQuery", grammar.get("dmlStatementNoWith#singleInsertQuery"));
  }

  @Test
  void statements_carry_their_class() {
    assertEquals(Map.of("query", "read"), sqlClass("SELECT * FROM t"));
    assertEquals(Map.of("createTable", "ddl"), sqlClass("CREATE TABLE t (a INT) USING parquet"));
    assertEquals(
        Map.of("setConfiguration", "session"), sqlClass("SET spark.sql.shuffle.partitions=4"));
    assertEquals(Map.of("dropView", "ddl"), sqlClass("DROP VIEW v"));
    assertEquals(
        Map.of("deleteFromTable", "write"),
        sqlClass("WITH c AS (SELECT 1) DELETE FROM t WHERE a = 1"));
    assertEquals(Map.of("manageResource", "admin"), sqlClass("ADD JAR /tmp/x.jar"));
    assertEquals(Map.of("explain", "read", "dropTable", "ddl"), sqlClass("EXPLAIN DROP TABLE t"));
    assertEquals(
        Map.of("executeImmediate", "script", "dropTable", "ddl"),
        sqlClass("EXECUTE IMMEDIATE 'DROP TABLE t'"));
    assertTrue(
        inspector
            .inspectSql("SELECT 1", SessionView.DEFAULT)
            .ofKind(Fact.Kind.UNCLASSIFIED)
            .isEmpty());
  }

  @Test
  void inserts_name_their_forms() {
    assertEquals(
        "insertOverwriteDir",
        sql("INSERT OVERWRITE LOCAL DIRECTORY '/tmp/x' USING parquet SELECT 1").get("insert"));
    assertEquals(
        "insertOverwriteHiveDir",
        sql("INSERT OVERWRITE DIRECTORY '/tmp/y' STORED AS orc SELECT 1").get("insert"));
    Fact multi =
        sql(
            "FROM s INSERT INTO a SELECT * INSERT OVERWRITE DIRECTORY 'x' USING csv SELECT * "
                + "INSERT INTO b SELECT *");
    assertEquals("multiInsertQuery", multi.subkind());
    assertEquals("insertIntoTable,insertOverwriteDir", multi.get("insert"));
    assertEquals(
        "insertIntoReplaceWhere", sql("INSERT INTO t REPLACE WHERE a = 1 SELECT 1").get("insert"));
    assertNull(sql("SELECT 1").get("insert"));
  }

  @Test
  void the_statements_of_a_block_have_their_own_kind_and_class() {
    String block =
        "BEGIN DECLARE x INT; SET x = 1; SELECT 1; IF x > 0 THEN BEGIN DROP TABLE t; END; END IF; "
            + "EXPLAIN INSERT OVERWRITE LOCAL DIRECTORY '/tmp/x' USING csv SELECT 1; END";
    assertEquals(
        Map.of(
            "compound",
            "script",
            "createVariable",
            "session",
            "query",
            "read",
            "dropTable",
            "ddl",
            "explain",
            "read",
            "singleInsertQuery",
            "write"),
        sqlClass(block));
    Fact insert =
        inspector.inspectSql(block, SessionView.DEFAULT).ofKind(Fact.Kind.SQL).stream()
            .filter(f -> f.subkind().equals("singleInsertQuery"))
            .findFirst()
            .orElseThrow();
    assertEquals("insertOverwriteDir", insert.get("insert"));
    assertEquals("true", insert.get("nested"));
  }

  @Test
  void a_kind_missing_from_the_table_is_reported() {
    List<String> lines = new ArrayList<>();
    for (StatementKinds.Kind k : StatementKinds.load().values()) {
      if (!Set.of("dropTable", "insertOverwriteDir").contains(k.name())) {
        lines.add(String.join("\t", k.name(), k.kindClass(), k.grammar(), k.description()));
      }
    }
    StatementKinds partial = new StatementKinds(StatementKinds.parse(lines));
    StatementKinds.Reading drop = partial.read(parse("DROP TABLE t"));
    assertEquals("dropTable", drop.kind());
    assertNull(drop.kindClass());
    assertEquals(List.of("dropTable"), drop.unknown());
    assertEquals(
        List.of("dropTable"),
        partial.nested(parse("DROP TABLE t").singleStatement().statement()).unknown());
    assertEquals(
        List.of("insertOverwriteDir"),
        partial.read(parse("INSERT OVERWRITE DIRECTORY 'x' USING csv SELECT 1")).unknown());
    assertEquals(List.of(), StatementKinds.TABLE.read(parse("DROP TABLE t")).unknown());

    FactSink sink = new FactSink(100);
    StatementKinds.reportUnknown(drop, "sql", sink);
    Fact unknown = sink.build().all().get(0);
    assertEquals(Fact.Kind.UNCLASSIFIED, unknown.kind());
    assertEquals("unknown_statement_kind", unknown.subkind());
    assertEquals("dropTable", unknown.get("kind"));
  }

  @Test
  void insert_forms_are_not_statement_kinds() {
    assertNull(StatementKinds.TABLE.of("insertOverwriteDir"));
    assertNotNull(StatementKinds.TABLE.of("singleInsertQuery"));
  }

  @Test
  void malformed_table_lines_are_refused_with_their_line() {
    String ok = "query\tread\tstatement#statementDefault\tA query.";
    assertEquals(1, StatementKinds.parse(List.of("# comment", "", ok)).size());
    assertTrue(
        assertThrows(
                IllegalStateException.class,
                () -> StatementKinds.parse(List.of(ok, "x\tread\tstatement#x")))
            .getMessage()
            .contains("line 2"));
    assertTrue(
        assertThrows(
                IllegalStateException.class,
                () -> StatementKinds.parse(List.of("x\tquery\tstatement#x\td")))
            .getMessage()
            .contains("class must be"));
    assertTrue(
        assertThrows(IllegalStateException.class, () -> StatementKinds.parse(List.of(ok, ok)))
            .getMessage()
            .contains("listed twice"));
  }

  @Test
  void docs_table_is_current() throws IOException {
    Path doc = Path.of("docs/statement-kinds.md");
    String text = Files.readString(doc, StandardCharsets.UTF_8);
    int begin = text.indexOf(BEGIN);
    int end = text.indexOf(END);
    assertTrue(
        begin >= 0 && end > begin, doc + " must hold the generated table between its two markers");
    String expected =
        text.substring(0, begin)
            + BEGIN
            + "\n"
            + render(StatementKinds.load().values())
            + END
            + text.substring(end + END.length());
    if (!expected.equals(text)) {
      Path fresh = Path.of("target/statement-kinds.md");
      Files.createDirectories(fresh.getParent());
      Files.writeString(fresh, expected, StandardCharsets.UTF_8);
      fail(doc + " is out of date with statement-kinds.tsv: copy " + fresh + " over it");
    }
  }

  /** The generated part of docs/statement-kinds.md: one table per class, rows in the file's order. */
  static String render(Collection<StatementKinds.Kind> rows) {
    StringBuilder out = new StringBuilder();
    for (String c : StatementKinds.CLASSES) {
      out.append("\n### ").append(c).append("\n\n| kind | grammar | what |\n| --- | --- | --- |\n");
      for (StatementKinds.Kind k : rows) {
        if (!k.kindClass().equals(c)) continue;
        out.append("| `")
            .append(k.name())
            .append("` | ")
            .append(k.grammar())
            .append(" | ")
            .append(k.description().replace("|", "\\|"))
            .append(" |\n");
      }
    }
    return out.append('\n').toString();
  }

  private SqlBaseParser.CompoundOrSingleStatementContext parse(String sql) {
    return parsing.parse(sql, SqlParsing.STATEMENT);
  }

  private Fact sql(String sql) {
    Facts facts = inspector.inspectSql(sql, SessionView.DEFAULT);
    assertTrue(facts.ofKind(Fact.Kind.UNCLASSIFIED).isEmpty(), () -> sql + ": " + facts.all());
    return facts.ofKind(Fact.Kind.SQL).get(0);
  }

  /** Kind to class of every SQL fact of the statement (EXECUTE IMMEDIATE's text is one of its own). */
  private Map<String, String> sqlClass(String sql) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Fact f : inspector.inspectSql(sql, SessionView.DEFAULT).ofKind(Fact.Kind.SQL)) {
      out.put(f.subkind(), f.get("class"));
    }
    return out;
  }
}
