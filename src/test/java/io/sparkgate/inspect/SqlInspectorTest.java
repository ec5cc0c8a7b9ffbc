package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.testing.TestFacts;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

final class SqlInspectorTest {
  private final Inspector inspector = new Inspector();
  private final SessionView session = SessionView.of("spark_catalog", "default", Set.of("iceberg"));

  private List<String> tables(String sql) {
    return inspector.inspectSql(sql, session).ofKind(Fact.Kind.TABLE_READ).stream()
        .map(f -> f.get("table"))
        .toList();
  }

  @Test
  void tables_through_comments_quotes_case_joins_subqueries_setops() {
    assertEquals(
        List.of(
            "spark_catalog.default.a",
            "spark_catalog.db.B",
            "iceberg.lake.t",
            "spark_catalog.default.d",
            "spark_catalog.default.e"),
        tables(
            "sElEcT * /* FROM c1 */ FrOm a -- FROM c2\n JOIN `db`.`B` ON 1=1 "
                + "WHERE x IN (SELECT y FROM iceberg.lake.t) UNION ALL SELECT * FROM d EXCEPT TABLE e"));
  }

  @Test
  void no_tables_in_string_literals_or_comments() {
    assertEquals(List.of(), tables("SELECT 'FROM secret', \"FROM x\" -- FROM y\n /* JOIN z */"));
    assertTrue(
        inspector
            .inspectSql("SELECT 'VERSION AS OF 1' /* t VERSION AS OF 2 */", session)
            .ofKind(Fact.Kind.TIME_TRAVEL)
            .isEmpty());
  }

  @Test
  void cte_names_are_not_tables_but_self_reference_is() {
    assertEquals(
        List.of("spark_catalog.default.base"),
        tables("WITH c AS (SELECT * FROM base), d AS (SELECT * FROM c) SELECT * FROM d JOIN c"));
    assertEquals(
        List.of("spark_catalog.default.t"), tables("WITH t AS (SELECT * FROM t) SELECT * FROM t"));
  }

  @Test
  void use_then_unqualified_names() {
    Facts f =
        inspector.inspectSql(
            "BEGIN USE iceberg.lake; SELECT * FROM trips; USE other; SELECT * FROM x; END",
            session);
    assertEquals(
        List.of("iceberg.lake.trips", "iceberg.other.x"),
        f.ofKind(Fact.Kind.TABLE_READ).stream().map(x -> x.get("table")).toList());
    SessionView inIceberg = SessionView.of("iceberg", "lake", Set.of("iceberg"));
    assertEquals(
        "iceberg.lake.trips",
        inspector
            .inspectSql("select * from trips", inIceberg)
            .ofKind(Fact.Kind.TABLE_READ)
            .get(0)
            .get("table"));
    assertEquals(
        "spark_catalog.db.t",
        inspector
            .inspectSql("select * from spark_catalog.db.t", inIceberg)
            .ofKind(Fact.Kind.TABLE_READ)
            .get(0)
            .get("table"));
  }

  @Test
  void four_time_travel_syntaxes_with_exact_spans() {
    String[][] cases = {
      {"VERSION AS OF 123", "VERSION", "integer", "123"},
      {"FOR SYSTEM_VERSION AS OF 'tag1'", "VERSION", "string", "'tag1'"},
      {"TIMESTAMP AS OF '2024-01-01 00:00:00'", "TIMESTAMP", "string", "'2024-01-01 00:00:00'"},
      {
        "for system_time as of current_timestamp() - INTERVAL 1 DAY",
        "TIMESTAMP",
        "expression",
        "current_timestamp() - INTERVAL 1 DAY"
      }
    };
    for (String[] c : cases) {
      String sql =
          "/* 🙂 emoji first */ SELECT * FROM iceberg.lake.`trips` "
              + c[0]
              + " AS t WHERE x = 'VERSION AS OF 9'";
      List<Fact> tt = inspector.inspectSql(sql, session).ofKind(Fact.Kind.TIME_TRAVEL);
      assertEquals(1, tt.size(), sql);
      Fact f = tt.get(0);
      assertEquals(c[1], f.subkind());
      assertEquals(c[2], f.get("value_type"));
      assertEquals("iceberg.lake.trips", f.get("table"));
      assertEquals(
          "iceberg.lake.`trips`", sql.substring(f.intAttr("table_start"), f.intAttr("table_end")));
      assertEquals(c[0], sql.substring(f.intAttr("clause_start"), f.intAttr("clause_end")));
      assertEquals(c[3], sql.substring(f.intAttr("value_start"), f.intAttr("value_end")));
    }
  }

  @Test
  void set_reset_add_create_function_execute_immediate() {
    Facts set =
        inspector.inspectSql(
            "SET spark.sql.artifact.copyFromLocalToFs.allowDestLocal = true;", session);
    assertEquals(
        "spark.sql.artifact.copyFromLocalToFs.allowDestLocal",
        set.ofKind(Fact.Kind.CONFIG_SET).get(0).get("key"));
    assertEquals("true", set.ofKind(Fact.Kind.CONFIG_SET).get(0).get("value"));
    assertEquals(
        "a.b",
        inspector
            .inspectSql("SET `a.b` = `x y`", session)
            .ofKind(Fact.Kind.CONFIG_SET)
            .get(0)
            .get("key"));
    assertEquals(
        "x y",
        inspector
            .inspectSql("SET `a.b` = `x y`", session)
            .ofKind(Fact.Kind.CONFIG_SET)
            .get(0)
            .get("value"));
    assertEquals(
        "*",
        inspector.inspectSql("RESET", session).ofKind(Fact.Kind.CONFIG_UNSET).get(0).get("key"));
    assertEquals(
        "k",
        inspector.inspectSql("RESET k", session).ofKind(Fact.Kind.CONFIG_UNSET).get(0).get("key"));
    assertTrue(inspector.inspectSql("SET k", session).ofKind(Fact.Kind.CONFIG_SET).isEmpty());
    // Spark reads the raw text after SET, comments included, and refuses a form it cannot match.
    for (String hidden :
        List.of(
            "SET /* x */ spark.connect.authenticate.token",
            "SET spark.connect.authenticate.token -- x",
            "SET /* x */ a.b=c")) {
      Facts facts = inspector.inspectSql(hidden, session);
      assertEquals(1, facts.ofKind(Fact.Kind.UNCLASSIFIED).size(), hidden);
      assertTrue(facts.ofKind(Fact.Kind.CONFIG_READ).isEmpty(), hidden);
      assertTrue(facts.ofKind(Fact.Kind.CONFIG_SET).isEmpty(), hidden);
    }
    assertEquals(
        "a.b",
        inspector.inspectSql("SET a.b ;", session).ofKind(Fact.Kind.CONFIG_READ).get(0).get("key"));
    assertEquals(
        "UTC",
        inspector
            .inspectSql("SET TIME ZONE 'UTC'", session)
            .ofKind(Fact.Kind.CONFIG_SET)
            .get(0)
            .get("value"));

    Facts add = inspector.inspectSql("add JAR '/tmp/x y.jar' file:/tmp/z.jar", session);
    assertEquals(
        List.of("/tmp/x y.jar", "file:/tmp/z.jar"),
        add.ofKind(Fact.Kind.ADD_RESOURCE).stream().map(f -> f.get("path")).toList());
    assertEquals(2, add.ofKind(Fact.Kind.PATH).size());
    assertEquals(
        "archive",
        inspector
            .inspectSql("ADD ARCHIVES 'a.zip'", session)
            .ofKind(Fact.Kind.ADD_RESOURCE)
            .get(0)
            .subkind());

    Fact cf =
        inspector
            .inspectSql("CREATE TEMPORARY FUNCTION f AS 'com.x.F' USING JAR 'hdfs:/x.jar'", session)
            .ofKind(Fact.Kind.CREATE_FUNCTION_USING)
            .get(0);
    assertEquals("com.x.F", cf.get("class_name"));
    assertEquals("jar hdfs:/x.jar", cf.get("resources"));

    Facts ei =
        inspector.inspectSql("EXECUTE IMMEDIATE 'SELECT * FROM hidden VERSION AS OF 1'", session);
    assertEquals(
        "SELECT * FROM hidden VERSION AS OF 1",
        ei.ofKind(Fact.Kind.EXECUTE_IMMEDIATE).get(0).get("query"));
    assertEquals(
        "spark_catalog.default.hidden", ei.ofKind(Fact.Kind.TIME_TRAVEL).get(0).get("table"));
    assertTrue(
        TestFacts.has(
            inspector.inspectSql("EXECUTE IMMEDIATE v", session),
            Fact.Kind.UNCLASSIFIED,
            "dynamic_sql"));
  }

  @Test
  void statement_kinds_writes_functions_and_hidden_names() {
    Facts f =
        inspector.inspectSql(
            "INSERT INTO iceberg.lake.t SELECT java_method('a','b'), upper(x) FROM s", session);
    assertEquals("singleInsertQuery", f.ofKind(Fact.Kind.SQL).get(0).subkind());
    assertEquals("iceberg.lake.t", f.ofKind(Fact.Kind.TABLE_WRITE).get(0).get("table"));
    assertEquals(
        List.of("java_method", "upper"),
        f.ofKind(Fact.Kind.FUNCTION_CALL).stream().map(x -> x.get("name")).toList());
    Facts merge =
        inspector.inspectSql(
            "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", session);
    assertEquals(
        "spark_catalog.default.t", merge.ofKind(Fact.Kind.TABLE_WRITE).get(0).get("table"));
    assertEquals("spark_catalog.default.s", merge.ofKind(Fact.Kind.TABLE_READ).get(0).get("table"));
    assertTrue(
        TestFacts.has(
            inspector.inspectSql("SELECT * FROM IDENTIFIER(:t)", session),
            Fact.Kind.UNCLASSIFIED,
            "hidden_identifier"));
    assertEquals(
        "spark_catalog.db.t",
        inspector
            .inspectSql("SELECT * FROM IDENTIFIER('db.t')", session)
            .ofKind(Fact.Kind.TABLE_READ)
            .get(0)
            .get("table"));
    assertTrue(
        TestFacts.has(
            inspector.inspectSql("SELECT (1 FROM t", session),
            Fact.Kind.UNCLASSIFIED,
            "unparseable_sql"));
    assertTrue(
        TestFacts.has(
            inspector.inspectSql("SELECT 1 /* unclosed", session),
            Fact.Kind.UNCLASSIFIED,
            "unparseable_sql"));
    assertTrue(
        inspector
            .inspectSql("SELECT count(*) FROM hudi_metadata('default.trips_cow')", session)
            .any(
                Fact.Kind.FUNCTION_CALL,
                x -> x.subkind().equals("table_valued") && x.get("name").equals("hudi_metadata")));
    assertEquals(
        "set_current_catalog",
        inspector
            .inspectSql("SET CATALOG iceberg", session)
            .ofKind(Fact.Kind.CATALOG_OP)
            .get(0)
            .subkind());
    assertEquals(
        "snapshot-id",
        inspector
            .inspectSql("SELECT * FROM t WITH ('snapshot-id' = '5')", session)
            .ofKind(Fact.Kind.TABLE_READ)
            .get(0)
            .attrs()
            .keySet()
            .stream()
            .filter(k -> k.startsWith("option."))
            .findFirst()
            .orElseThrow()
            .substring("option.".length()));
  }

  @Test
  void sql_text_bounds() {
    String huge = "SELECT " + "1+".repeat(50_000_000) + "1";
    int parses = SqlParsing.parses();
    Facts f = inspector.inspectSql(huge, session);
    assertTrue(TestFacts.has(f, Fact.Kind.UNCLASSIFIED, "sql_too_long"));
    assertEquals(
        String.valueOf(InspectorConfig.DEFAULTS.maxSqlChars()),
        f.ofKind(Fact.Kind.UNCLASSIFIED).get(0).get("limit"));
    assertEquals(
        parses, SqlParsing.parses(), "a 100 MB statement is refused before the lexer reads it");
    String deep = "SELECT " + "(".repeat(5000) + "1" + ")".repeat(5000);
    assertTrue(
        TestFacts.has(
            inspector.inspectSql(deep, session), Fact.Kind.UNCLASSIFIED, "unparseable_sql"));
  }

  /** Found by RequestBytesFuzzTest: under a bound shorter than the 256 characters shown, the cut ran past the end. */
  @Test
  void sqlTooLong_underABoundShorterThanTheShownPrefix_isAFactNotAnException() {
    Inspector strict = new Inspector(new InspectorConfig(1024, 64, 64L << 20, 10_000, Set.of()));
    String sql = "SELECT " + "a, ".repeat(30) + "b FROM t"; // over 64 characters, under 256
    Facts f = strict.inspectSql(sql, session);
    assertTrue(TestFacts.has(f, Fact.Kind.UNCLASSIFIED, "sql_too_long"), f.toString());
    assertEquals(sql, f.ofKind(Fact.Kind.SQL).get(0).get("sql"));
  }

  @Test
  void lateral_view_generator_is_a_function_call() {
    // Found by SparkParserDifferentialTest: Spark resolves LATERAL VIEW's generator through the
    // function
    // registry (UnresolvedGenerator), so a catalog function there runs like any other call.
    Facts f =
        inspector.inspectSql(
            "SELECT * FROM t LATERAL VIEW OUTER db.`Evil_Udtf`(a) x AS c LATERAL VIEW explode(b) y",
            session);
    List<String> calls =
        f.ofKind(Fact.Kind.FUNCTION_CALL).stream()
            .map(c -> c.subkind() + ":" + c.get("qualified") + ":" + c.get("namespace"))
            .toList();
    assertEquals(List.of("generator:db.evil_udtf:catalog", "generator:explode:"), calls);
  }

  @Test
  void extract_and_between_are_calls_by_name() {
    // Found by SparkParserDifferentialTest: Spark's AstBuilder parses both into UnresolvedFunction,
    // so they
    // are resolved by name (and meet the function rules) like a written call.
    Facts f =
        inspector.inspectSql(
            "SELECT EXTRACT(YEAR FROM d) FROM t WHERE a NOT BETWEEN 1 AND 2 AND trim(b) = 'x'",
            session);
    List<String> calls =
        f.ofKind(Fact.Kind.FUNCTION_CALL).stream().map(c -> c.get("name")).sorted().toList();
    assertEquals(List.of("between", "extract", "trim"), calls);
  }

  @Test
  void add_resource_paths_split_as_spark_does() {
    // Found by SparkParserDifferentialTest: Spark splits ADD JAR's text with its own pattern
    // (quotes
    // end a path anywhere; only space, tab, CR and LF separate; comments and semicolons are text).
    assertEquals(
        List.of("/tmp/", "evil", ".jar", "\u3000/x.jar;"),
        inspector
            .inspectSql("ADD JAR /tmp/\"evil\".jar \u3000/x.jar;", session)
            .ofKind(Fact.Kind.ADD_RESOURCE)
            .stream()
            .map(f -> f.get("path"))
            .toList());
  }

  @Test
  void set_values_trimmed_as_spark_does() {
    // Found by SparkParserDifferentialTest: Spark trims SET's text with String.trim, which keeps
    // Unicode spaces such as U+3000, and SET `key` = value keeps a space before a semicolon.
    Fact set =
        inspector
            .inspectSql("SET spark.sql.catalog.x =\u3000com.example.Evil ;", session)
            .ofKind(Fact.Kind.CONFIG_SET)
            .get(0);
    assertEquals("\u3000com.example.Evil", set.get("value"));
    assertEquals(
        "c ",
        inspector
            .inspectSql("SET `a.b` = c ;", session)
            .ofKind(Fact.Kind.CONFIG_SET)
            .get(0)
            .get("value"));
    assertEquals(
        "a.b",
        inspector.inspectSql("SET a.b ;", session).ofKind(Fact.Kind.CONFIG_READ).get(0).get("key"));
  }

  @Test
  void insert_overwrite_directory_without_using_writes_with_hive() {
    // Found by SparkParserDifferentialTest: Spark's InsertIntoDir for the Hive form has provider
    // hive.
    Facts f =
        inspector.inspectSql(
            "INSERT OVERWRITE DIRECTORY 's3a://b/out' STORED AS PARQUET SELECT 1", session);
    assertEquals("hive", f.ofKind(Fact.Kind.DATA_SOURCE).get(0).get("format"));
  }

  @Test
  void refresh_of_a_path_names_the_path() {
    // Found by SparkParserDifferentialTest: RefreshResource holds the path, quoted or the rest of
    // the text.
    for (String sql : List.of("REFRESH 's3a://bucket/data'", "REFRESH s3a://bucket/data")) {
      assertEquals(
          List.of("s3a://bucket/data"),
          inspector.inspectSql(sql, session).ofKind(Fact.Kind.PATH).stream()
              .map(f -> f.get("path"))
              .toList(),
          sql);
    }
  }

  @Test
  void set_value_may_hold_an_unclosed_comment_as_in_spark() {
    // Found by SparkParserDifferentialTest: Spark lets SET key=value end in an unclosed /* (its
    // value is
    // the raw text, SET path=/data/*) and refuses it everywhere else.
    Facts set = inspector.inspectSql("SET `a.b`=/data/*", session);
    assertEquals("/data/*", set.ofKind(Fact.Kind.CONFIG_SET).get(0).get("value"));
    assertEquals(List.of(), set.ofKind(Fact.Kind.UNCLASSIFIED));
    for (String sql : List.of("SELECT 1 /*", "SET a /*", "BEGIN SET a=/x/*; END")) {
      assertTrue(
          TestFacts.has(
              inspector.inspectSql(sql, session), Fact.Kind.UNCLASSIFIED, "unparseable_sql"),
          sql);
    }
  }

  @Test
  void identifier_with_other_than_one_plain_argument_calls_a_function_named_identifier() {
    // Found by SparkParserDifferentialTest's mutation campaign: IDENTIFIER('a', 'b') is no
    // identifier
    // clause to Spark but a call of a function named identifier; IDENTIFIER('c1') names a column.
    for (String sql :
        List.of(
            "SELECT IDENTIFIER('a', 'b')",
            "SELECT IDENTIFIER(DISTINCT 'a')",
            "SELECT IDENTIFIER(ALL c) FROM t",
            "SELECT IDENTIFIER('a') FILTER (WHERE x) FROM t",
            "SELECT IDENTIFIER('a') IGNORE NULLS FROM t",
            "SELECT IDENTIFIER('a') OVER (ORDER BY x) FROM t")) {
      assertEquals(
          List.of("identifier"),
          inspector.inspectSql(sql, session).ofKind(Fact.Kind.FUNCTION_CALL).stream()
              .map(f -> f.get("name"))
              .toList(),
          sql);
    }
    assertEquals(
        List.of(),
        inspector
            .inspectSql("SELECT IDENTIFIER('c1') FROM t", session)
            .ofKind(Fact.Kind.FUNCTION_CALL));
  }
}
