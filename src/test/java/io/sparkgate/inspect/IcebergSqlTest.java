package io.sparkgate.inspect;

import static io.sparkgate.inspect.ExtensionSqlTesting.read;
import static io.sparkgate.inspect.ExtensionSqlTesting.session;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.inspect.grammar.iceberg.IcebergSqlExtensionsParser;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.TestFacts;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Statements from Iceberg's Spark DDL and procedure docs, read with Iceberg's generated grammar. */
final class IcebergSqlTest {
  private static final Set<String> ICEBERG_ONLY = Set.of(ExtensionSql.ICEBERG);

  private static Fact statement(String sql) {
    Facts facts = read(sql, ICEBERG_ONLY);
    assertEquals(1, facts.ofKind(Fact.Kind.SQL).size(), sql + " -> " + facts);
    return facts.ofKind(Fact.Kind.SQL).get(0);
  }

  @Test
  void every_statement_alternative_of_the_grammar_has_a_kind() {
    Set<String> alternatives =
        Arrays.stream(IcebergSqlExtensionsParser.class.getClasses())
            .filter(c -> IcebergSqlExtensionsParser.StatementContext.class.isAssignableFrom(c))
            .filter(c -> c != IcebergSqlExtensionsParser.StatementContext.class)
            .map(Class::getSimpleName)
            .collect(Collectors.toSet());
    Set<String> mapped =
        IcebergSql.STATEMENTS.keySet().stream()
            .map(Class::getSimpleName)
            .collect(Collectors.toSet());
    assertEquals(alternatives, mapped);
    assertEquals(
        11, mapped.size()); // the 1.10.0 grammar; a new release's alternative fails the line above
  }

  @Test
  void partition_field_statements_from_the_docs() {
    String[][] cases = {
      {"ALTER TABLE prod.db.sample ADD PARTITION FIELD catalog", "iceberg.addPartitionField"},
      {
        "ALTER TABLE prod.db.sample ADD PARTITION FIELD bucket(16, id)", "iceberg.addPartitionField"
      },
      {
        "ALTER TABLE prod.db.sample ADD PARTITION FIELD truncate(4, data)",
        "iceberg.addPartitionField"
      },
      {"alter table prod.db.sample add partition field years(ts)", "iceberg.addPartitionField"},
      {
        "ALTER TABLE prod.db.sample ADD PARTITION FIELD bucket(16, id) AS shard",
        "iceberg.addPartitionField"
      },
      {"ALTER TABLE prod.db.sample DROP PARTITION FIELD catalog", "iceberg.dropPartitionField"},
      {
        "ALTER TABLE prod.db.sample DROP PARTITION FIELD bucket(16, id)",
        "iceberg.dropPartitionField"
      },
      {
        "ALTER TABLE prod.db.sample REPLACE PARTITION FIELD ts_day WITH day(ts)",
        "iceberg.replacePartitionField"
      },
      {
        "ALTER TABLE prod.db.sample REPLACE PARTITION FIELD ts_day WITH day(ts) AS day_of_ts",
        "iceberg.replacePartitionField"
      }
    };
    for (String[] c : cases) {
      Fact sql = statement(c[0]);
      assertEquals(c[1], sql.subkind(), c[0]);
      assertEquals("ddl", sql.get("class"));
      assertEquals("iceberg", sql.get("extension"));
      assertEquals(c[0], sql.get("sql"));
    }
  }

  @Test
  void write_order_distribution_and_identifier_fields() {
    for (String order :
        List.of(
            "ORDERED BY category, id",
            "ORDERED BY category ASC, id DESC",
            "ORDERED BY category ASC NULLS LAST, id DESC NULLS FIRST",
            "LOCALLY ORDERED BY category, id",
            "UNORDERED",
            "DISTRIBUTED BY PARTITION",
            "DISTRIBUTED BY PARTITION LOCALLY ORDERED BY category, id",
            "ORDERED BY bucket(16, id), days(ts)")) {
      assertEquals(
          "iceberg.setWriteDistributionAndOrdering",
          statement("ALTER TABLE prod.db.sample WRITE " + order).subkind(),
          order);
    }
    assertEquals(
        "iceberg.setIdentifierFields",
        statement("ALTER TABLE prod.db.sample SET IDENTIFIER FIELDS id").subkind());
    assertEquals(
        "iceberg.setIdentifierFields",
        statement("ALTER TABLE prod.db.sample SET IDENTIFIER FIELDS id, data").subkind());
    assertEquals(
        "iceberg.dropIdentifierFields",
        statement("ALTER TABLE prod.db.sample DROP IDENTIFIER FIELDS id, data").subkind());
  }

  @Test
  void branches_and_tags_name_the_ref_and_whether_it_may_be_replaced() {
    Fact create =
        statement(
            "ALTER TABLE prod.db.sample CREATE BRANCH `audit-branch` AS OF VERSION 1234 RETAIN 30 DAYS");
    assertEquals("iceberg.createOrReplaceBranch", create.subkind());
    assertEquals("audit-branch", create.get("branch"));
    assertEquals("false", create.get("replace"));
    assertEquals(
        "false",
        statement("ALTER TABLE prod.db.sample CREATE BRANCH IF NOT EXISTS b").get("replace"));
    assertEquals(
        "true", statement("ALTER TABLE prod.db.sample CREATE OR REPLACE BRANCH b").get("replace"));
    assertEquals(
        "true",
        statement(
                "ALTER TABLE prod.db.sample REPLACE BRANCH `audit-branch` AS OF VERSION 4567 RETAIN 60 DAYS")
            .get("replace"));
    assertEquals(
        "iceberg.createOrReplaceBranch",
        statement(
                "ALTER TABLE prod.db.sample CREATE BRANCH `audit-branch` "
                    + "AS OF VERSION 1234 RETAIN 30 DAYS WITH SNAPSHOT RETENTION 3 SNAPSHOTS 2 DAYS")
            .subkind());
    Fact drop = statement("ALTER TABLE prod.db.sample DROP BRANCH IF EXISTS `audit-branch`");
    assertEquals("iceberg.dropBranch", drop.subkind());
    assertEquals("audit-branch", drop.get("branch"));

    Fact tag =
        statement(
            "ALTER TABLE prod.db.sample CREATE TAG `historical-tag` AS OF VERSION 1234 RETAIN 365 DAYS");
    assertEquals("iceberg.createOrReplaceTag", tag.subkind());
    assertEquals("historical-tag", tag.get("tag"));
    assertEquals("false", tag.get("replace"));
    assertEquals(
        "true",
        statement("ALTER TABLE prod.db.sample CREATE OR REPLACE TAG `historical-tag`")
            .get("replace"));
    assertEquals(
        "true",
        statement(
                "ALTER TABLE prod.db.sample REPLACE TAG `historical-tag` AS OF VERSION 5678 RETAIN 60 DAYS")
            .get("replace"));
    assertEquals(
        "iceberg.dropTag",
        statement("ALTER TABLE prod.db.sample DROP TAG `historical-tag`").subkind());
  }

  @Test
  void the_table_is_written_and_resolved_like_spark_names() {
    Facts facts =
        read("ALTER TABLE prod.db.`my``table` ADD PARTITION FIELD bucket(16, id)", ICEBERG_ONLY);
    Fact write = facts.ofKind(Fact.Kind.TABLE_WRITE).get(0);
    assertEquals("iceberg.addPartitionField", write.subkind());
    assertEquals("prod.db.my`table", write.get("table"));
    assertEquals("prod", write.get("catalog"));
    assertEquals("db", write.get("database"));
    assertEquals("my`table", write.get("name"));
    assertEquals("prod.db.`my``table`", write.get("written"));
    assertEquals(12, write.intAttr("span_start"));
    assertEquals(31, write.intAttr("span_end"));
    assertEquals("iceberg", write.get("extension"));

    Fact unqualified =
        read("ALTER TABLE sample WRITE UNORDERED", ICEBERG_ONLY)
            .ofKind(Fact.Kind.TABLE_WRITE)
            .get(0);
    assertEquals("spark_catalog.default.sample", unqualified.get("table"));
  }

  @Test
  void procedure_calls_report_the_name_and_the_strings_that_are_paths() {
    Facts facts =
        read(
            "CALL Prod.System.Remove_Orphan_Files(table => 'db.sample', location => 'file:/etc', "
                + "dry_run => true)",
            ICEBERG_ONLY);
    assertEquals("iceberg.call", facts.ofKind(Fact.Kind.SQL).get(0).subkind());
    assertEquals("admin", facts.ofKind(Fact.Kind.SQL).get(0).get("class"));
    Fact call = facts.ofKind(Fact.Kind.FUNCTION_CALL).get(0);
    assertEquals("procedure", call.subkind());
    assertEquals("prod.system.remove_orphan_files", call.get("name"));
    assertEquals("Prod.System.Remove_Orphan_Files", call.get("written"));
    Fact path = facts.ofKind(Fact.Kind.PATH).get(0);
    assertEquals(
        1, facts.ofKind(Fact.Kind.PATH).size(), facts.toString()); // 'db.sample' is a table name
    assertEquals("file_scheme", path.subkind());
    assertEquals("file:/etc", path.get("path"));
    assertEquals("file", path.get("scheme"));
    assertEquals("procedure_argument.location", path.get("context"));

    // positional arguments, adjacent literals, MAP(...) values (also by their key) and ARRAY(...)
    // elements
    Facts nested =
        read(
            "CALL prod.system.rewrite_data_files('db.sample', 'file:' '/tmp/x', "
                + "map('location', '/etc/passwd', 'warehouse', 'wh', 'min-input-files', '2'), array('../up'))",
            ICEBERG_ONLY);
    assertEquals(
        Set.of(
            "file_scheme:file:/tmp/x:procedure_argument",
            "absolute:/etc/passwd:procedure_argument.location",
            "relative:wh:procedure_argument.warehouse",
            "parent_ref:../up:procedure_argument"),
        nested.ofKind(Fact.Kind.PATH).stream()
            .map(f -> f.subkind() + ":" + f.get("path") + ":" + f.get("context"))
            .collect(Collectors.toSet()));

    // a path argument that is not a string cannot be checked: refused, as for Spark's grammar
    assertTrue(
        TestFacts.has(
            read(
                "CALL prod.system.add_files(table => 'db.t', source_table => 'parquet.`/x`', location => 42)",
                ICEBERG_ONLY),
            Fact.Kind.UNCLASSIFIED,
            "computed_argument"));
  }

  @Test
  void
      a_table_procedure_reports_its_table_resolved_in_the_procedures_catalog_and_reads_its_filter() {
    Facts facts =
        read(
            "CALL prod.system.rewrite_data_files(table => '`Db`.sample', "
                + "where => 'id IN (SELECT id FROM other.t)')",
            ICEBERG_ONLY);
    Fact call = facts.ofKind(Fact.Kind.FUNCTION_CALL).get(0);
    assertEquals("resolved", call.get("table_argument"));
    Fact table =
        facts.ofKind(Fact.Kind.TABLE_WRITE).stream()
            .filter(f -> f.subkind().equals("procedure"))
            .findFirst()
            .orElseThrow();
    assertEquals(
        "prod.Db.sample", table.get("table"), "in the procedure's catalog, not the current one");
    assertEquals("prod.system.rewrite_data_files", table.get("procedure"));
    assertEquals(
        "spark_catalog.other.t",
        facts.ofKind(Fact.Kind.TABLE_READ).get(0).get("table"),
        "the filter is an expression the session parser reads, its subquery too");

    Fact read =
        read("CALL prod.system.ancestors_of('iceberg.db.t')", ICEBERG_ONLY)
            .ofKind(Fact.Kind.TABLE_READ)
            .get(0);
    assertEquals("iceberg.db.t", read.get("table"), "a first part that is a catalog names it");
    assertEquals("procedure", read.subkind());

    // What Iceberg's reading does not settle: a one-part name outside the current catalog, a table
    // named
    // twice, a procedure not known, a view of files; and with Hudi's extension loaded, Hudi runs
    // every CALL.
    for (String sql :
        List.of(
            "CALL prod.system.expire_snapshots(table => 'sample')",
            "CALL prod.system.expire_snapshots('db.a', table => 'db.b')",
            "CALL prod.system.snapshot('db.a', 'db.b')",
            "CALL prod.system.remove_orphan_files(table => 'db.a', file_list_view => 'v')")) {
      Facts unresolved = read(sql, ICEBERG_ONLY);
      assertNull(unresolved.ofKind(Fact.Kind.FUNCTION_CALL).get(0).get("table_argument"), sql);
      assertTrue(
          unresolved.ofKind(Fact.Kind.TABLE_WRITE).isEmpty()
              && unresolved.ofKind(Fact.Kind.TABLE_READ).isEmpty(),
          sql);
    }
    Facts withHudi =
        read(
            "CALL prod.system.expire_snapshots(table => 'db.a')",
            Set.of(ExtensionSql.ICEBERG, ExtensionSql.HUDI));
    assertNull(withHudi.ofKind(Fact.Kind.FUNCTION_CALL).get(0).get("table_argument"));
  }

  @Test
  void through_the_inspector_when_the_backend_loads_iceberg() {
    Inspector inspector = new Inspector();
    String sql = "ALTER TABLE prod.db.sample ADD PARTITION FIELD bucket(16, id)";
    Facts facts =
        inspector.inspectSql(sql, session(Set.of(ExtensionSql.ICEBERG, ExtensionSql.HUDI)));
    assertEquals("iceberg.addPartitionField", facts.ofKind(Fact.Kind.SQL).get(0).subkind());
    assertEquals("prod.db.sample", facts.ofKind(Fact.Kind.TABLE_WRITE).get(0).get("table"));
    assertFalse(facts.has(Fact.Kind.UNCLASSIFIED), facts.toString());
    // the same text on a backend without the extension (the statement cache keys on the session's
    // extensions)
    assertTrue(
        TestFacts.has(
            inspector.inspectSql(sql, session(Set.of(ExtensionSql.HUDI))),
            Fact.Kind.UNCLASSIFIED,
            "unparseable_sql"));
    assertTrue(
        TestFacts.has(
            inspector.inspectSql(sql, SessionView.DEFAULT),
            Fact.Kind.UNCLASSIFIED,
            "unparseable_sql"));

    SessionView both = session(Set.of(ExtensionSql.ICEBERG, ExtensionSql.HUDI));
    assertTrue(
        TestFacts.has(
            inspector.inspectSql("RUN COMPACTION ON hudi_table", both),
            Fact.Kind.SQL,
            "hudi.compactionOnTable"));
    assertTrue(
        TestFacts.has(
            inspector.inspectSql("ALTER TABLE t CREATE BRANCH ${name}", both),
            Fact.Kind.UNCLASSIFIED,
            "variable_substitution"));
    assertTrue(
        TestFacts.has(
            inspector.inspectSql("ALTER TABLE t CREATE BRANCH b -- ${x}", both),
            Fact.Kind.UNCLASSIFIED,
            "variable_substitution"));
    Facts immediate = inspector.inspectSql("EXECUTE IMMEDIATE 'ALTER TABLE t DROP BRANCH b'", both);
    assertTrue(TestFacts.has(immediate, Fact.Kind.SQL, "iceberg.dropBranch"), immediate.toString());
    assertEquals(
        "spark_catalog.default.t", immediate.ofKind(Fact.Kind.TABLE_WRITE).get(0).get("table"));
    // Spark's grammar comes first: what it reads is never read again with Iceberg's
    assertTrue(
        TestFacts.has(
            inspector.inspectSql("CALL prod.system.expire_snapshots('db.t')", both),
            Fact.Kind.SQL,
            "call"));
  }

  @Test
  void whatever_iceberg_would_not_read_stays_unread() {
    for (String sql :
        List.of(
            "RUN COMPACTION ON hudi_table", // Hudi's, not Iceberg's
            "ALTER TABLE prod.db.sample ADD PARTITION FIELD", // incomplete
            "ALTER TABLE prod.db.sample ADD PARTITION FIELD id; DROP TABLE x", // one statement only
            "ALTER TABLE prod.db.sample ADD /* c */ PARTITION FIELD id", // Iceberg's own test
            // misses it
            "ALTER TABLE prod.db.sample CREATE BRANCH b AS OF VERSION 'x'", // not a number
            "ALTER TABLE prod.db.sample WRITE ORDERED BY",
            "ALTER VIEW prod.db.sample ADD PARTITION FIELD id",
            "CALL prod.other.remove_orphan_files(table => 'db.sample')", // not a system procedure
            "CALL prod.system.x(a => 1 + 1)", // expressions are not constants
            "SELECT * FROM t CHANGES FROM VERSION 1",
            "")) {
      assertTrue(read(sql, ICEBERG_ONLY).all().isEmpty(), sql);
    }
    assertTrue(read("ALTER TABLE prod.db.sample ADD PARTITION FIELD id", Set.of()).all().isEmpty());
    assertTrue(
        read("ALTER TABLE prod.db.sample ADD PARTITION FIELD id", Set.of(ExtensionSql.HUDI))
            .all()
            .isEmpty());
  }

  @Test
  void recognises_as_icebergs_parser_does() {
    assertTrue(IcebergSql.recognises("  Alter\tTable x -- note\n WRITE  ORDERED\nBY y"));
    assertTrue(IcebergSql.recognises("alter table x /* c */ drop branch b"));
    assertTrue(IcebergSql.recognises("call `cat`.`system`.`expire_snapshots`('t')"));
    assertFalse(IcebergSql.recognises("alter table x add /* c */ partition field y"));
    // Java's '.' stops at '\r': that comment stays in, and its text breaks the phrase.
    assertTrue(IcebergSql.recognises("alter table x add partition -- c\nfield y"));
    assertFalse(IcebergSql.recognises("alter table x add partition -- c\r\nfield y"));
    assertFalse(IcebergSql.recognises("select 'alter table x add partition field y'"));
    assertEquals(
        "alter table x add partition field y -- z",
        IcebergSql.normalize("ALTER TABLE x add partition field y -- z"));
    assertEquals("a   b /* c", IcebergSql.normalize("a /* x */ b /* c"));
  }

  @Test
  void hostile_text_is_bounded() {
    assertTimeoutPreemptively(
        Await.HANG,
        () -> {
          for (String unit : List.of("-", "/*", "*/", "(", "bucket(", "'", "`(")) {
            String sql = "ALTER TABLE t ADD PARTITION FIELD " + unit.repeat(200_000);
            assertTrue(read(sql, ICEBERG_ONLY).all().isEmpty(), unit);
          }
          assertNotNull(IcebergSql.parse("ALTER TABLE t /* a /* b */ */ ADD PARTITION FIELD id"));
          assertNull(
              IcebergSql.parse(
                  "ALTER TABLE t "
                      + "/*".repeat(17)
                      + "*/".repeat(17)
                      + " ADD PARTITION FIELD id"));
        });
    assertNull(IcebergSql.parse("ALTER TABLE t WRITE ORDERED BY " + "x, ".repeat(50_000)));
    assertNotNull(IcebergSql.parse("ALTER TABLE t WRITE ORDERED BY " + "x, ".repeat(50_000) + "x"));
  }
}
