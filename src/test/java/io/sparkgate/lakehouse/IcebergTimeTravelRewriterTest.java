package io.sparkgate.lakehouse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionView;
import java.util.List;
import org.junit.jupiter.api.Test;

final class IcebergTimeTravelRewriterTest {
  private static final Inspector INSPECTOR = new Inspector();

  private static List<Fact> blocked(String sql, SessionView session, BackendProfile profile) {
    return MixedTableFormats.blocked(INSPECTOR.inspectSql(sql, session), profile);
  }

  private static IcebergTimeTravelRewriter.Result result(String sql, SessionView session)
      throws RefusedException {
    return IcebergTimeTravelRewriter.rewrite(sql, blocked(sql, session, Profiles.MIXED), session);
  }

  private static String rewrite(String sql) throws RefusedException {
    return result(sql, Profiles.session(null)).sql();
  }

  private static RefusedException refused(String sql) {
    return assertThrows(RefusedException.class, () -> rewrite(sql));
  }

  // ---- the four syntaxes
  // ----------------------------------------------------------------------------------

  @Test
  void versionAsOf_becomesSnapshotIdSuffix_withTheTableNameAsAlias() throws Exception {
    assertEquals(
        "SELECT * FROM iceberg.lake.trips.snapshot_id_123 AS trips",
        rewrite("SELECT * FROM iceberg.lake.trips VERSION AS OF 123"));
  }

  @Test
  void forSystemVersionAsOf_keepsAnExplicitAlias() throws Exception {
    assertEquals(
        "SELECT t.id FROM iceberg.lake.trips.snapshot_id_123 t WHERE t.id > 1",
        rewrite(
            "SELECT t.id FROM iceberg.lake.trips FOR SYSTEM_VERSION AS OF 123 t WHERE t.id > 1"));
    assertEquals(
        "SELECT * FROM iceberg.lake.trips.snapshot_id_9 AS t",
        rewrite("SELECT * FROM iceberg.lake.trips for system_version as of 9 AS t"));
  }

  @Test
  void timestampAsOf_becomesEpochMillisInUtcByDefault() throws Exception {
    assertEquals(
        "SELECT * FROM iceberg.lake.trips.at_timestamp_1704164645678 AS trips",
        rewrite("SELECT * FROM iceberg.lake.trips TIMESTAMP AS OF '2024-01-02 03:04:05.678'"));
  }

  @Test
  void forSystemTimeAsOf_usesTheSessionTimeZone() throws Exception {
    String sql =
        "SELECT * FROM iceberg.lake.trips FOR SYSTEM_TIME AS OF '2024-01-02 03:04:05.678' x";
    assertEquals(
        "SELECT * FROM iceberg.lake.trips.at_timestamp_1704182645678 x",
        result(sql, Profiles.session("America/New_York")).sql());
    assertEquals(
        "SELECT * FROM iceberg.lake.trips.at_timestamp_1704164645678 x",
        result(sql, Profiles.session("UTC")).sql());
    assertEquals(
        "SELECT * FROM iceberg.lake.trips.at_timestamp_1704157445678 x",
        result(sql, Profiles.session("+02:00")).sql());
  }

  @Test
  void timestampForms_dateOnly_isoT_andAnExplicitZoneThatWinsOverTheSession() throws Exception {
    SessionView paris = Profiles.session("Europe/Paris");
    assertEquals(
        "SELECT 1 FROM iceberg.lake.trips.at_timestamp_1719784800000 AS trips",
        result("SELECT 1 FROM iceberg.lake.trips TIMESTAMP AS OF '2024-07-01'", paris).sql());
    assertEquals(
        "SELECT 1 FROM iceberg.lake.trips.at_timestamp_1704157445678 AS trips",
        result(
                "SELECT 1 FROM iceberg.lake.trips TIMESTAMP AS OF '2024-01-02T03:04:05.678+02:00'",
                paris)
            .sql());
    assertEquals(
        "SELECT 1 FROM iceberg.lake.trips.at_timestamp_1704164645678 AS trips",
        result(
                "SELECT 1 FROM iceberg.lake.trips TIMESTAMP AS OF '2024-01-02 03:04:05.678999 UTC'",
                paris)
            .sql());
    assertEquals(
        "SELECT 1 FROM iceberg.lake.trips.at_timestamp_1704067200000 AS trips",
        result("SELECT 1 FROM iceberg.lake.trips TIMESTAMP AS OF '2024-01-01T00:00:00Z'", paris)
            .sql());
  }

  // ---- the rest of the statement stays byte-identical
  // ----------------------------------------------------

  @Test
  void commentsAndStringLiteralsMentioningTimeTravelAreUntouched() throws Exception {
    String sql =
        "/* VERSION AS OF 1 */ SELECT 'iceberg.lake.trips VERSION AS OF 5' AS s, -- TIMESTAMP AS OF 'x'\n"
            + "  id FROM iceberg.lake.trips VERSION AS OF 42 WHERE city <> \"FOR SYSTEM_TIME AS OF\"";
    assertEquals(
        "/* VERSION AS OF 1 */ SELECT 'iceberg.lake.trips VERSION AS OF 5' AS s, -- TIMESTAMP AS OF 'x'\n"
            + "  id FROM iceberg.lake.trips.snapshot_id_42 AS trips WHERE city <> \"FOR SYSTEM_TIME AS OF\"",
        rewrite(sql));
  }

  @Test
  void joinCteAndSubquery_eachRelationRewritten_lastToFirst() throws Exception {
    String sql =
        "WITH old AS (SELECT id FROM iceberg.lake.trips VERSION AS OF 1)\n"
            + "SELECT o.id FROM old o JOIN iceberg.lake.riders FOR SYSTEM_TIME AS OF '2024-01-01' r ON o.id = r.id\n"
            + "WHERE o.id IN (SELECT id FROM iceberg.lake.trips FOR SYSTEM_VERSION AS OF 2 WHERE id > 0)";
    IcebergTimeTravelRewriter.Result r = result(sql, Profiles.session(null));
    assertEquals(
        "WITH old AS (SELECT id FROM iceberg.lake.trips.snapshot_id_1 AS trips)\n"
            + "SELECT o.id FROM old o JOIN iceberg.lake.riders.at_timestamp_1704067200000 r ON o.id = r.id\n"
            + "WHERE o.id IN (SELECT id FROM iceberg.lake.trips.snapshot_id_2 AS trips WHERE id > 0)",
        r.sql());
    assertEquals(
        List.of(
            new Rewrite(
                "iceberg.lake.trips",
                "iceberg.lake.trips VERSION AS OF 1",
                "iceberg.lake.trips.snapshot_id_1 AS trips",
                "sql"),
            new Rewrite(
                "iceberg.lake.riders",
                "iceberg.lake.riders FOR SYSTEM_TIME AS OF '2024-01-01'",
                "iceberg.lake.riders.at_timestamp_1704067200000",
                "sql"),
            new Rewrite(
                "iceberg.lake.trips",
                "iceberg.lake.trips FOR SYSTEM_VERSION AS OF 2",
                "iceberg.lake.trips.snapshot_id_2 AS trips",
                "sql")),
        r.rewrites());
  }

  @Test
  void aCommentBetweenNameAndClauseIsKept_andTheAliasGoesAfterASample() throws Exception {
    assertEquals(
        "SELECT * FROM iceberg.lake.trips.snapshot_id_1 /* old */ AS trips",
        rewrite("SELECT * FROM iceberg.lake.trips /* old */ VERSION AS OF 1"));
    assertEquals(
        "SELECT * FROM iceberg.lake.trips.snapshot_id_1 -- old\n AS trips WHERE id > 0",
        rewrite("SELECT * FROM iceberg.lake.trips -- old\n  VERSION AS OF 1 WHERE id > 0"));
    assertEquals(
        "SELECT * FROM iceberg.lake.trips.snapshot_id_1 TABLESAMPLE (50 PERCENT) AS trips",
        rewrite("SELECT * FROM iceberg.lake.trips VERSION AS OF 1 TABLESAMPLE (50 PERCENT)"));
  }

  @Test
  void backquotedNamesKeepTheirQuoting() throws Exception {
    assertEquals(
        "SELECT * FROM `iceberg`.`lake`.`trips`.snapshot_id_123 AS trips",
        rewrite("SELECT * FROM `iceberg`.`lake`.`trips` VERSION AS OF 123"));
    assertEquals(
        "SELECT * FROM iceberg.lake.`my trips`.snapshot_id_7 AS `my trips`",
        rewrite("SELECT * FROM iceberg.lake.`my trips` VERSION AS OF 7"));
    assertEquals(
        "SELECT * FROM iceberg.`a``b`.t.snapshot_id_7 AS t",
        rewrite("SELECT * FROM iceberg.`a``b`.t VERSION AS OF 7"));
  }

  @Test
  void aOnePartNameIsQualified_soTheSuffixIsNotReadAsANamespace() throws Exception {
    SessionView lake = Profiles.inIcebergLake(null);
    assertEquals(
        "SELECT * FROM iceberg.lake.trips.snapshot_id_5 AS trips",
        result("SELECT * FROM trips VERSION AS OF 5", lake).sql());
    assertEquals(
        "SELECT * FROM lake.trips.snapshot_id_5 AS trips",
        result("SELECT * FROM lake.trips VERSION AS OF 5", lake).sql());
  }

  // ---- what is not Iceberg, or not mixed, is left alone
  // --------------------------------------------------

  @Test
  void hudiTablesInTheSessionCatalogAreNotRewritten() throws Exception {
    String sql =
        "SELECT * FROM default.trips_cow TIMESTAMP AS OF '20240101000000000' "
            + "JOIN spark_catalog.default.t2 VERSION AS OF 3 ON true";
    assertEquals(List.of(), blocked(sql, Profiles.session(null), Profiles.MIXED));
    IcebergTimeTravelRewriter.Result r = result(sql, Profiles.session(null));
    assertEquals(sql, r.sql());
    assertEquals(List.of(), r.rewrites());
  }

  @Test
  void onlyTheIcebergRelationOfAMixedJoinIsRewritten() throws Exception {
    assertEquals(
        "SELECT * FROM default.trips_cow TIMESTAMP AS OF '20240101000000000' h "
            + "JOIN iceberg.lake.trips.snapshot_id_8 i ON h.uuid = i.id",
        rewrite(
            "SELECT * FROM default.trips_cow TIMESTAMP AS OF '20240101000000000' h "
                + "JOIN iceberg.lake.trips VERSION AS OF 8 i ON h.uuid = i.id"));
  }

  @Test
  void onAnIcebergOnlyBackendNothingIsBlocked() {
    assertEquals(
        List.of(),
        blocked(
            "SELECT * FROM iceberg.lake.trips VERSION AS OF 1",
            Profiles.session(null),
            Profiles.ICEBERG_ONLY));
  }

  // ---- refusals
  // --------------------------------------------------------------------------------------------

  @Test
  void branchOrTagNamesAreRefusedWithTheRefForms() {
    RefusedException e = refused("SELECT * FROM iceberg.lake.trips VERSION AS OF 'audit-branch'");
    assertEquals("iceberg.lake.trips", e.table());
    assertTrue(e.reason().contains("branch or tag"), e.reason());
    assertTrue(e.getMessage().contains("iceberg.lake.trips.branch_audit-branch"), e.getMessage());
    assertTrue(e.getMessage().contains(".option(\"tag\", \"audit-branch\")"), e.getMessage());
  }

  @Test
  void expressionsAreRefused() {
    RefusedException ts =
        refused(
            "SELECT * FROM iceberg.lake.trips TIMESTAMP AS OF current_timestamp() - INTERVAL 1 HOUR");
    assertTrue(ts.reason().contains("expression"), ts.reason());
    assertTrue(
        ts.getMessage().contains("iceberg.lake.trips.at_timestamp_<epoch millis>"),
        ts.getMessage());
    RefusedException cast =
        refused("SELECT * FROM iceberg.lake.trips TIMESTAMP AS OF CAST('2024-01-01' AS TIMESTAMP)");
    assertTrue(cast.reason().contains("expression"), cast.reason());
    // (VERSION AS OF 12L does not parse in Spark's grammar: an unparseable_sql fact, refused by the
    // policy.)
    assertEquals(
        List.of(),
        blocked(
            "SELECT * FROM iceberg.lake.trips VERSION AS OF 12L",
            Profiles.session(null),
            Profiles.MIXED));
  }

  @Test
  void timestampsThatCannotBeConvertedAreRefused() {
    assertTrue(
        refused("SELECT * FROM iceberg.lake.trips TIMESTAMP AS OF '10:00:00'")
            .reason()
            .contains("form"));
    assertTrue(
        refused("SELECT * FROM iceberg.lake.trips TIMESTAMP AS OF '2024-02-30'")
            .reason()
            .contains("not valid"));
    assertTrue(
        refused("SELECT * FROM iceberg.lake.trips TIMESTAMP AS OF '1969-12-31'")
            .reason()
            .contains("1970"));
    RefusedException zone =
        assertThrows(
            RefusedException.class,
            () ->
                result(
                    "SELECT * FROM iceberg.lake.trips TIMESTAMP AS OF '2024-01-01'",
                    Profiles.session("Mars/Olympus")));
    assertTrue(zone.reason().contains("Mars/Olympus"), zone.reason());
  }

  @Test
  void identifierClauseNamesAreRefused() {
    RefusedException e = refused("SELECT * FROM IDENTIFIER('iceberg.lake.trips') VERSION AS OF 1");
    assertTrue(e.reason().contains("IDENTIFIER"), e.reason());
  }

  @Test
  void theRefusalMessageNamesTheTableAndTheWorkingForms() {
    Fact version =
        blocked(
                "SELECT * FROM iceberg.lake.trips VERSION AS OF 42",
                Profiles.session(null),
                Profiles.MIXED)
            .get(0);
    String m = TimeTravelRefusals.message(version, null, null);
    assertTrue(m.contains("VERSION AS OF 42") && m.contains("iceberg.lake.trips"), m);
    assertTrue(
        m.contains(
            "spark.read.format(\"iceberg\").option(\"snapshot-id\", 42).load(\"iceberg.lake.trips\")"),
        m);
    assertTrue(m.contains("iceberg.lake.trips.snapshot_id_42"), m);
    Fact ts =
        blocked(
                "SELECT * FROM iceberg.lake.trips FOR SYSTEM_TIME AS OF '2024-01-01'",
                Profiles.session(null),
                Profiles.MIXED)
            .get(0);
    String t = TimeTravelRefusals.message(ts, "UTC", null);
    assertTrue(t.contains("iceberg.lake.trips.at_timestamp_1704067200000"), t);
    assertTrue(t.contains(".option(\"as-of-timestamp\", 1704067200000)"), t);
  }
}
