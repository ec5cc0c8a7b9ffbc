package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.spark.sql.catalyst.parser.SqlBaseParser;
import org.junit.jupiter.api.Test;

/**
 * The parse-tree cache (shared trees, keyed by everything that changes a parse, safe to walk at once) and the
 * statement-facts cache (keyed by everything that changes the facts).
 */
final class SqlCachesTest {
  private static final List<String> CORPUS =
      List.of(
          "SELECT 1",
          "SELECT a, b FROM db.t WHERE x = 1 ORDER BY a LIMIT 10",
          "WITH c AS (SELECT * FROM base) SELECT * FROM c JOIN other o ON c.id = o.id",
          "SELECT * FROM iceberg.lake.trips VERSION AS OF 123",
          "SELECT * FROM t FOR SYSTEM_TIME AS OF current_timestamp() - INTERVAL 1 DAY",
          "SET spark.sql.shuffle.partitions = 8",
          "SET spark.hadoop.fs.s3a.secret.key",
          "INSERT INTO lake.events SELECT * FROM staging.events",
          "CREATE TABLE x USING parquet LOCATION '/tmp/x' AS SELECT reflect('java.lang.Runtime', 'getRuntime')",
          "SELECT java_method('java.lang.System', 'getenv', 'HOME')",
          "BEGIN USE iceberg.lake; SELECT * FROM trips; USE other; SELECT * FROM x; END",
          "EXECUTE IMMEDIATE 'SELECT * FROM secret.t'",
          "SELECT * FROM parquet.`/etc/passwd`",
          "DROP TABLE IF EXISTS spark_catalog.db.t",
          "SELECT ${var} FROM t",
          "ADD JAR /tmp/evil.jar",
          "SELECT transform(a, x -> x + 1) FROM t UNION ALL SELECT b FROM u EXCEPT TABLE v",
          "SELECT FROM WHERE",
          "SELECT (((((1)))))");
  private final SessionView session = SessionView.of("spark_catalog", "default", Set.of("iceberg"));

  @Test
  void a_repeated_text_gets_the_same_tree_and_a_long_one_is_parsed_each_time() {
    SqlParsing.clearTrees();
    SqlParsing parsing = new SqlParsing(SqlParserFlags.SPARK_4_0_DEFAULTS, 100);
    String sql = "SELECT * FROM t WHERE id = '" + UUID.randomUUID() + "'";
    assertSame(parsing.parse(sql, SqlParsing.STATEMENT), parsing.parse(sql, SqlParsing.STATEMENT));
    assertSame(
        parsing.parse(sql, SqlParsing.STATEMENT),
        new SqlParsing(SqlParserFlags.SPARK_4_0_DEFAULTS, 100).parse(sql, SqlParsing.STATEMENT),
        "shared across instances with the same flags");

    String longSql = "SELECT '" + "x".repeat(SqlParsing.MAX_CACHED_CHARS) + "'";
    assertNotSame(
        parsing.parse(longSql, SqlParsing.STATEMENT), parsing.parse(longSql, SqlParsing.STATEMENT));
  }

  @Test
  void flags_nesting_bound_and_rule_are_part_of_the_key() {
    String sql = "SELECT \"col\" FROM t -- " + UUID.randomUUID();
    SqlParserFlags ansiQuoted = new SqlParserFlags(false, false, false, true);
    var plain =
        new SqlParsing(SqlParserFlags.SPARK_4_0_DEFAULTS, 100).parse(sql, SqlParsing.STATEMENT);
    var quoted = new SqlParsing(ansiQuoted, 100).parse(sql, SqlParsing.STATEMENT);
    assertNotSame(plain, quoted);
    // With double-quoted identifiers "col" is a column, not a string: the trees differ, not just
    // their identity.
    List<String> rules = List.of(SqlBaseParser.ruleNames);
    assertTrue(
        plain.toStringTree(rules).contains("(stringLit \"col\")"), plain.toStringTree(rules));
    assertTrue(!quoted.toStringTree(rules).contains("stringLit"), quoted.toStringTree(rules));

    String nested = "SELECT " + "(".repeat(5) + "1" + ")".repeat(5) + " -- " + UUID.randomUUID();
    new SqlParsing(SqlParserFlags.SPARK_4_0_DEFAULTS, 100).parse(nested, SqlParsing.STATEMENT);
    var e =
        assertThrows(
            SqlParsing.SqlSyntaxException.class,
            () ->
                new SqlParsing(SqlParserFlags.SPARK_4_0_DEFAULTS, 3)
                    .parse(nested, SqlParsing.STATEMENT));
    assertEquals("nesting deeper than 3", e.getMessage());

    String expr = "a + 1";
    assertTrue(
        new SqlParsing(SqlParserFlags.SPARK_4_0_DEFAULTS, 100).parse(expr, SqlParsing.EXPRESSION)
            instanceof SqlBaseParser.SingleExpressionContext);
  }

  @Test
  void a_syntax_error_is_remembered_and_thrown_again() {
    SqlParsing parsing = new SqlParsing(SqlParserFlags.SPARK_4_0_DEFAULTS, 100);
    String bad = "SELEKT * FROM t -- " + UUID.randomUUID();
    var first =
        assertThrows(
            SqlParsing.SqlSyntaxException.class, () -> parsing.parse(bad, SqlParsing.STATEMENT));
    var again =
        assertThrows(
            SqlParsing.SqlSyntaxException.class, () -> parsing.parse(bad, SqlParsing.STATEMENT));
    assertEquals(first.getMessage(), again.getMessage());
    assertTrue(first.getMessage().startsWith("line 1:0"), first.getMessage());
  }

  @Test
  void cached_facts_follow_the_session_and_the_place_in_the_request() {
    Inspector inspector = new Inspector();
    String sql = "SELECT * FROM trips -- " + UUID.randomUUID();
    SessionView inIceberg = SessionView.of("iceberg", "lake", Set.of("iceberg"));
    for (int i = 0; i < 2; i++) {
      assertEquals("spark_catalog.default.trips", table(inspector.inspectSql(sql, session)));
      assertEquals("iceberg.lake.trips", table(inspector.inspectSql(sql, inIceberg)));
    }
    // The same text in two places of one request: each fact says where it was found.
    InspectorConfig config = InspectorConfig.DEFAULTS;
    SqlInspector sqlInspector = new SqlInspector(config);
    FactSink sink = new FactSink(config.maxFacts());
    sqlInspector.statement(sql, "relation", "root.sql", session, sink);
    sqlInspector.statement(sql, "command", "command.sql_command", session, sink);
    List<Fact> reads = sink.build().ofKind(Fact.Kind.TABLE_READ);
    assertEquals(
        List.of("root.sql", "command.sql_command"),
        reads.stream().map(f -> f.get("where")).toList());
    assertEquals(
        List.of("relation", "command"),
        sink.build().ofKind(Fact.Kind.SQL).stream().map(f -> f.get("origin")).toList());
  }

  /** More facts than a message may have: never cached, and the bound holds whether or not it was. */
  @Test
  void a_statement_over_the_fact_bound_ends_with_too_many_facts_every_time() {
    InspectorConfig small =
        new InspectorConfig(
            InspectorConfig.DEFAULTS.maxDepth(),
            InspectorConfig.DEFAULTS.maxSqlChars(),
            InspectorConfig.DEFAULTS.maxDecompressedBytes(),
            10,
            InspectorConfig.DEFAULTS.knownExtensionTypeUrls());
    Inspector inspector = new Inspector(small);
    String sql = "SELECT * FROM a, b, c, d, e, f, g, h, i, j, k, l"; // a SQL fact and 12 tables
    for (int i = 0; i < 2; i++) {
      List<Fact> facts = inspector.inspectSql(sql, session).all();
      assertEquals(11, facts.size(), facts.toString());
      assertEquals("too_many_facts", facts.get(10).subkind());
    }
    // Below the bound in a sink that already holds facts: the replayed facts are bounded by that
    // sink.
    SqlInspector sqlInspector = new SqlInspector(small);
    sqlInspector.statement(
        "SELECT * FROM a", "relation", "sql", session, new FactSink(10)); // cached now
    FactSink nearlyFull = new FactSink(10);
    for (int i = 0; i < 9; i++)
      nearlyFull.add(Fact.Kind.REQUEST, "ExecutePlan", java.util.Map.of());
    sqlInspector.statement(
        "SELECT * FROM a", "relation", "sql", session, nearlyFull); // SQL + TABLE_READ
    List<Fact> all = nearlyFull.build().all();
    assertEquals(11, all.size(), all.toString());
    assertEquals(Fact.Kind.SQL, all.get(9).kind());
    assertEquals("too_many_facts", all.get(10).subkind());
  }

  private static String table(Facts facts) {
    return facts.ofKind(Fact.Kind.TABLE_READ).get(0).get("table");
  }

  /**
   * Each statement's first inspection parses and walks it (the texts are new to both caches); later ones,
   * from eight threads at once, replay the cached facts or walk the shared tree (another inspector, so its
   * facts cache is cold). Every inspection must see exactly the facts of the first.
   */
  @Test
  void walking_shared_trees_concurrently_gives_the_facts_of_a_fresh_parse() throws Exception {
    Inspector inspector = new Inspector();
    Inspector other = new Inspector();
    String run = " -- " + UUID.randomUUID();
    List<String> texts = CORPUS.stream().map(s -> s + run).toList();
    List<List<Fact>> fresh =
        texts.stream().map(s -> inspector.inspectSql(s, session).all()).toList();
    assertTrue(fresh.stream().allMatch(f -> !f.isEmpty()));

    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Integer>> results = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        int offset = t;
        Callable<Integer> task =
            () -> {
              int checked = 0;
              for (int round = 0; round < 200; round++) {
                int i = (round + offset) % texts.size();
                Inspector which = (round + offset) % 2 == 0 ? inspector : other;
                assertEquals(
                    fresh.get(i), which.inspectSql(texts.get(i), session).all(), texts.get(i));
                checked++;
              }
              return checked;
            };
        results.add(pool.submit(task));
      }
      for (Future<Integer> r : results) assertEquals(200, r.get());
    } finally {
      pool.shutdownNow();
    }
  }
}
