package io.sparkgate.inspect;

import static io.sparkgate.inspect.ExtensionSqlTesting.read;
import static io.sparkgate.inspect.ExtensionSqlTesting.session;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.testing.Await;
import io.sparkgate.testing.TestFacts;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Statements from Hudi's SQL docs, read with the grammars generated for Hudi 1.2.0, run on their own ANTLR. */
final class HudiSqlTest {
  private static final Set<String> HUDI_ONLY = Set.of(ExtensionSql.HUDI);

  private static Facts hudi(String sql) {
    return read(sql, HUDI_ONLY);
  }

  private static Fact statement(Facts facts) {
    assertEquals(1, facts.ofKind(Fact.Kind.SQL).size(), facts.toString());
    return facts.ofKind(Fact.Kind.SQL).get(0);
  }

  /** The labels of the alternatives of {@code rule} in Hudi's generated parser {@code grammar}. */
  private static Set<String> alternatives(String grammar, String rule) throws Exception {
    String parser = "org.apache.hudi.spark.sql.parser." + grammar + "Parser";
    String base =
        parser + "$" + Character.toUpperCase(rule.charAt(0)) + rule.substring(1) + "Context";
    return Arrays.stream(Class.forName(parser, true, Antlr49.get().loader).getClasses())
        .filter(c -> c.getSuperclass().getName().equals(base))
        .map(GrammarTree::alternative)
        .collect(Collectors.toSet());
  }

  @Test
  void every_statement_alternative_of_both_grammars_is_read_or_handed_on() throws Exception {
    Set<String> alternatives = new HashSet<>(alternatives("HoodieSqlCommon", "statement"));
    alternatives.addAll(alternatives("HoodieSqlCommon", "compactionStatement"));
    alternatives.addAll(alternatives("HoodieSqlBase", "statement"));
    Set<String> known = new HashSet<>(HudiSql.STATEMENTS.keySet());
    known.addAll(HudiSql.HANDED_ON);
    known.add("compactionCommand"); // wraps compactionStatement's alternatives
    assertEquals(alternatives, known);
    assertEquals(
        14, known.size()); // the 1.2.0 grammars; a new release's alternative fails the line above
  }

  @Test
  void the_grammars_run_on_their_own_antlr_out_of_sight_of_the_class_path() throws Exception {
    assertEquals("4.13.1", org.antlr.v4.runtime.RuntimeMetaData.VERSION);
    assertEquals("4.9.3", Antlr49.get().type("RuntimeMetaData").getField("VERSION").get(null));
    assertThrows(
        ClassNotFoundException.class,
        () -> Class.forName("org.apache.hudi.spark.sql.parser.HoodieSqlCommonParser"));
    assertNotNull(HudiGrammar.COMMON.parse("RUN COMPACTION ON t", Set.of()));
  }

  @Test
  void compaction_on_a_table_writes_it_and_show_compaction_reads_it() {
    Facts run = hudi("RUN COMPACTION ON db.trips AT 20260101000000");
    Fact sql = statement(run);
    assertEquals("hudi.compactionOnTable", sql.subkind());
    assertEquals("admin", sql.get("class"));
    assertEquals("hudi", sql.get("extension"));
    assertEquals("run", sql.get("operation"));
    Fact write = run.ofKind(Fact.Kind.TABLE_WRITE).get(0);
    assertEquals("hudi.compactionOnTable", write.subkind());
    assertEquals("spark_catalog.db.trips", write.get("table"));
    assertEquals("db.trips", write.get("written"));
    assertEquals(18, write.intAttr("span_start"));
    assertEquals(26, write.intAttr("span_end"));
    assertEquals("hudi", write.get("extension"));
    assertFalse(run.has(Fact.Kind.TABLE_READ));

    Fact schedule = statement(hudi("schedule compaction on Trips"));
    assertEquals("hudi.compactionOnTable", schedule.subkind());
    assertEquals("schedule", schedule.get("operation"));
    assertEquals(
        "spark_catalog.default.Trips",
        hudi("schedule compaction on Trips").ofKind(Fact.Kind.TABLE_WRITE).get(0).get("table"));

    Facts show = hudi("SHOW COMPACTION ON trips LIMIT 10");
    assertEquals("hudi.showCompactionOnTable", statement(show).subkind());
    assertEquals("read", statement(show).get("class"));
    Fact table = show.ofKind(Fact.Kind.TABLE_READ).get(0);
    assertEquals("sql", table.subkind());
    assertEquals("hudi.showCompactionOnTable", table.get("statement"));
    assertEquals("spark_catalog.default.trips", table.get("table"));
    assertFalse(show.has(Fact.Kind.TABLE_WRITE));
    // comments and a trailing semicolon, as Hudi's grammar allows them
    assertEquals(
        "hudi.compactionOnTable",
        statement(hudi("/* nightly */ RUN -- now\n COMPACTION ON t;")).subkind());
  }

  @Test
  void the_path_forms_are_paths_and_name_no_table() {
    Facts local = hudi("RUN COMPACTION ON '/data/hudi/trips'");
    assertEquals("hudi.compactionOnPath", statement(local).subkind());
    Fact path = local.ofKind(Fact.Kind.PATH).get(0);
    assertEquals("absolute", path.subkind());
    assertEquals("/data/hudi/trips", path.get("path"));
    assertEquals("file", path.get("scheme"));
    assertEquals("table_path", path.get("context"));
    assertFalse(local.has(Fact.Kind.TABLE_WRITE) || local.has(Fact.Kind.TABLE_READ));

    Facts s3 = hudi("SHOW COMPACTION ON \"s3a://lake/trips\" LIMIT 5");
    assertEquals("hudi.showCompactionOnPath", statement(s3).subkind());
    assertEquals("s3a", s3.ofKind(Fact.Kind.PATH).get(0).get("scheme"));
    // a relative path is one too (resolved against the default file system), and the text keeps its
    // case and its characters: the lexer sees it upper-cased, one code point at a time
    Fact relative =
        hudi("schedule compaction on 'lake/Tr\u00fcps\uD83D\uDE00/\u00df' at 1")
            .ofKind(Fact.Kind.PATH)
            .get(0);
    assertEquals("relative", relative.subkind());
    assertEquals("lake/Tr\u00fcps\uD83D\uDE00/\u00df", relative.get("path"));
    assertEquals("file", relative.get("scheme"));
  }

  @Test
  void procedure_calls_report_the_name_and_the_strings_that_are_paths() {
    // No parentheses: Spark's grammar refuses it, Hudi's reads it.
    Facts bare = hudi("CALL show_commits");
    assertEquals("hudi.call", statement(bare).subkind());
    assertEquals("admin", statement(bare).get("class"));
    assertEquals("show_commits", bare.ofKind(Fact.Kind.FUNCTION_CALL).get(0).get("name"));
    assertEquals("procedure", bare.ofKind(Fact.Kind.FUNCTION_CALL).get(0).subkind());

    Facts facts =
        hudi(
            "CALL `Run_Clustering`(table => 'db.trips', path => 'file:' '/tmp/x', "
                + "options => map('hoodie.clustering.plan.strategy.sort.columns', 'id', 'base_path', 'hdfs:///lake'), "
                + "'../up', 10, true, date '2026-01-01')");
    Fact call = facts.ofKind(Fact.Kind.FUNCTION_CALL).get(0);
    assertEquals("run_clustering", call.get("name"));
    assertEquals("`Run_Clustering`", call.get("written"));
    assertEquals(
        Set.of(
            "file_scheme:file:/tmp/x:procedure_argument.path",
            "uri:hdfs:///lake:procedure_argument.options.base_path",
            "parent_ref:../up:procedure_argument"),
        facts.ofKind(Fact.Kind.PATH).stream()
            .map(f -> f.subkind() + ":" + f.get("path") + ":" + f.get("context"))
            .collect(Collectors.toSet()));
    // a path argument that is not a string cannot be checked: refused, as for Spark's grammar
    assertTrue(
        TestFacts.has(
            hudi("CALL run_clean(table => 't', path => 42)"),
            Fact.Kind.UNCLASSIFIED,
            "computed_argument"));
  }

  @Test
  void index_statements_are_read_with_hudis_copy_of_sparks_grammar() {
    Facts create =
        hudi(
            "CREATE INDEX IF NOT EXISTS idx_city ON TABLE db.trips USING column_stats "
                + "(city OPTIONS (`hoodie.x.y` = 'z'), fare) OPTIONS (path = '/tmp/idx', expr = 'lower')");
    Fact sql = statement(create);
    assertEquals("hudi.createIndex", sql.subkind());
    assertEquals("ddl", sql.get("class"));
    assertEquals("idx_city", sql.get("index"));
    assertEquals(
        "spark_catalog.db.trips", create.ofKind(Fact.Kind.TABLE_WRITE).get(0).get("table"));
    Fact path = create.ofKind(Fact.Kind.PATH).get(0);
    assertEquals("/tmp/idx", path.get("path"));
    assertEquals("options.path", path.get("context"));
    assertEquals("hoodie.x.y", create.ofKind(Fact.Kind.CONFIG_SET).get(0).get("key"));

    Facts drop = hudi("DROP INDEX IF EXISTS idx ON `my-db`.`t``1`");
    assertEquals("hudi.dropIndex", statement(drop).subkind());
    Fact written = drop.ofKind(Fact.Kind.TABLE_WRITE).get(0);
    assertEquals("my-db", written.get("database"));
    assertEquals("t`1", written.get("name"));
    assertEquals("`my-db`.`t``1`", written.get("written"));

    Facts show = hudi("SHOW INDEXES IN TABLE trips");
    assertEquals("hudi.showIndexes", statement(show).subkind());
    assertEquals("hudi.showIndexes", show.ofKind(Fact.Kind.TABLE_READ).get(0).get("statement"));
    Facts refresh = hudi("refresh  index idx on trips");
    assertEquals("hudi.refreshIndex", statement(refresh).subkind());
    assertEquals("idx", statement(refresh).get("index"));
    assertEquals(
        "spark_catalog.default.trips", refresh.ofKind(Fact.Kind.TABLE_WRITE).get(0).get("table"));
  }

  @Test
  void through_the_inspector_when_the_backend_loads_hudi() {
    Inspector inspector = new Inspector();
    SessionView both = session(Set.of(ExtensionSql.ICEBERG, ExtensionSql.HUDI));
    Facts facts = inspector.inspectSql("RUN COMPACTION ON hudi_table", both);
    assertEquals("hudi.compactionOnTable", facts.ofKind(Fact.Kind.SQL).get(0).subkind());
    assertEquals(
        "spark_catalog.default.hudi_table",
        facts.ofKind(Fact.Kind.TABLE_WRITE).get(0).get("table"));
    assertFalse(facts.has(Fact.Kind.UNCLASSIFIED), facts.toString());
    // the same text on a backend without the extension (the statement cache keys on the session's
    // extensions)
    assertTrue(
        TestFacts.has(
            inspector.inspectSql(
                "RUN COMPACTION ON hudi_table", session(Set.of(ExtensionSql.ICEBERG))),
            Fact.Kind.UNCLASSIFIED,
            "unparseable_sql"));
    // Hudi's parser reads text before Spark's: what it takes as its own is Hudi's, even where
    // Spark's grammar reads it too (as a Hive command Spark refuses, as REFRESH of a path)
    assertTrue(
        TestFacts.has(
            inspector.inspectSql("SHOW INDEXES FROM t", both), Fact.Kind.SQL, "hudi.showIndexes"));
    assertTrue(
        TestFacts.has(
            inspector.inspectSql("REFRESH INDEX i ON t", both),
            Fact.Kind.SQL,
            "hudi.refreshIndex"));
    assertTrue(
        TestFacts.has(
            inspector.inspectSql("SHOW INDEXES FROM t", SessionView.DEFAULT),
            Fact.Kind.SQL,
            "failNativeCommand"));
    assertTrue(
        TestFacts.has(
            inspector.inspectSql("REFRESH INDEX i ON t", SessionView.DEFAULT),
            Fact.Kind.SQL,
            "refreshResource"));
    assertTrue(
        TestFacts.has(
            inspector.inspectSql("SHOW TRANSACTIONS", both), Fact.Kind.SQL, "failNativeCommand"));
    Facts immediate = inspector.inspectSql("EXECUTE IMMEDIATE 'SHOW COMPACTION ON t'", both);
    assertTrue(
        TestFacts.has(immediate, Fact.Kind.SQL, "hudi.showCompactionOnTable"),
        immediate.toString());
    assertTrue(
        TestFacts.has(
            inspector.inspectSql("RUN COMPACTION ON t -- ${x}", both),
            Fact.Kind.UNCLASSIFIED,
            "variable_substitution"));
    // Spark's grammar comes first: what it reads is never read again with Hudi's
    assertTrue(
        TestFacts.has(
            inspector.inspectSql("CALL show_commits(table => 't')", both), Fact.Kind.SQL, "call"));
    assertTrue(
        TestFacts.has(
            inspector.inspectSql("CREATE INDEX i ON t (c)", both), Fact.Kind.SQL, "createIndex"));
  }

  @Test
  void whatever_hudi_would_not_read_stays_unread() {
    for (String sql :
        List.of(
            "RUN COMPACTION ON", // incomplete
            "RUN COMPACTION ON `t`", // its table names take no quotes
            "RUN COMPACTION ON prod.db.t", // nor three parts
            "RUN COMPACTION ON t AT x", // not a number
            "RUN COMPACTION ON t; DROP TABLE x", // one statement only
            "SHOW COMPACTION ON t LIMIT -1",
            "SHOW INDEXES FROM",
            "SHOW INDEXES FROM a-b", // Hudi refuses the name
            "REFRESH INDEX ON t",
            "show indexes from t.u.v",
            "SELECT * FROM t VERSION AS OF 1 VECTOR", // Hudi's copy of Spark's grammar: not read
            "ALTER TABLE prod.db.sample ADD PARTITION FIELD id", // Iceberg's, not Hudi's
            "CALL",
            "")) {
      assertTrue(hudi(sql).all().isEmpty(), sql);
    }
    assertTrue(read("RUN COMPACTION ON t", Set.of()).all().isEmpty());
    assertTrue(read("RUN COMPACTION ON t", Set.of(ExtensionSql.ICEBERG)).all().isEmpty());
  }

  @Test
  void recognises_extended_statements_as_hudis_parser_does() {
    assertTrue(HudiSql.extendedCommand("  SHOW\t\n INDEXES FROM t"));
    assertTrue(HudiSql.extendedCommand("select 'drop  index'")); // inside a string too, as in Hudi
    assertFalse(HudiSql.extendedCommand("showindexes from t"));
    assertFalse(HudiSql.extendedCommand("show /* c */ indexes from t")); // Hudi keeps comments
    assertTrue(HudiSql.extendedCommand("x blob"));
    assertFalse(HudiSql.extendedCommand("blob")); // the phrase starts with a space
  }

  @Test
  void hostile_text_is_bounded() {
    assertTimeoutPreemptively(
        Await.HANG,
        () -> {
          for (String prefix : List.of("RUN COMPACTION ON ", "SHOW INDEXES FROM ", "CALL p(")) {
            for (String unit : List.of("-", "/*", "*/", "(", "'", "`(", "a.")) {
              String sql = prefix + unit.repeat(100_000);
              assertTrue(hudi(sql).all().isEmpty(), prefix + unit);
            }
          }
          assertNotNull(HudiGrammar.BASE.parse("SHOW INDEXES /* a /* b */ */ FROM t", Set.of()));
          assertNull(
              HudiGrammar.BASE.parse(
                  "SHOW INDEXES " + "/*".repeat(17) + "*/".repeat(17) + " FROM t", Set.of()));
        });
    // text Hudi hands on is kept without its tokens
    GrammarTree passed =
        HudiGrammar.COMMON.parse("SELECT " + "x, ".repeat(50_000) + "x", HudiSql.HANDED_ON);
    assertEquals("passThrough", passed.child(0).name());
    assertTrue(passed.child(0).children().isEmpty());
    assertEquals(150_008, passed.child(0).end());
  }
}
