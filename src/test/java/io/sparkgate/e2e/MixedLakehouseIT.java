package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.sparkgate.Sparkgate;
import io.sparkgate.TestProxies;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.CallHook;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.BackendProfiler;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.testing.Channels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The mixed-extension time-travel rule on a REAL Spark 3.5.7 + Hudi 1.2.0 + Iceberg 1.10.0 server, driven with
 * requests built from the protos. Two proxies in front of it, both running the shipped
 * {@code policies/mixed-lakehouse.yaml} through the policy engine: one as shipped (Iceberg SQL time travel
 * refused with FAILED_PRECONDITION and the working alternative), one with the rule's effect switched to
 * {@code rewrite} (time travel rewritten to the {@code snapshot_id_}/{@code at_timestamp_} table forms).
 */
@ExtendWith(MixedLakehouseServerExtension.class)
class MixedLakehouseIT {
  private static final String TABLE = "iceberg.lake.trips";

  private static ManagedChannel directChannel;
  private static ManagedChannel rewriteChannel;
  private static ManagedChannel refuseChannel;
  private static Sparkgate rewriteProxy;
  private static Sparkgate refuseProxy;
  private static ConnectRequests direct;
  private static ConnectRequests viaRewrite;
  private static ConnectRequests viaRefuse;
  private static BackendProfile profile;

  /** SQL the rewriting proxy forwarded with a snapshot_id_/at_timestamp_ table form, i.e. rewritten by policy. */
  private static final List<String> rewrites = Collections.synchronizedList(new ArrayList<>());

  private static final List<String> forwardedByRefuseProxy =
      Collections.synchronizedList(new ArrayList<>());

  /** Iceberg snapshots in commit order: id and commit time (epoch millis). */
  private static final List<long[]> snapshots = new ArrayList<>();

  @BeforeAll
  static void start(MixedLakehouseServerExtension.MixedServer server) throws Exception {
    directChannel = channel(server.process().port());
    profile = new BackendProfiler(directChannel, "sparkgate-profiler", 30_000).read();

    // Both proxies run the shipped policies/mixed-lakehouse.yaml through the policy engine (which
    // reads the backend profile itself); the rewriting one has its time-travel rule switched to
    // effect: rewrite. A recorder after the policy stage sees exactly what is forwarded to the
    // server.
    Path dir =
        Files.createDirectories(Path.of("target", "e2e", "mixed-" + java.util.UUID.randomUUID()))
            .toAbsolutePath();
    Path shipped = Path.of("policies", "mixed-lakehouse.yaml").toAbsolutePath();
    String refusing = Files.readString(shipped);
    String rewriting =
        refusing.replaceFirst(
            "effect: deny\\n    status: failed_precondition",
            "effect: rewrite\n    rewriter: iceberg_time_travel\n    status: failed_precondition");
    assertNotEquals(refusing, rewriting, "the shipped time-travel rule changed shape");
    // The copy lives elsewhere: its include names the shipped file it includes.
    String include = "- include: shared-server.yaml";
    assertTrue(
        rewriting.contains(include), "the shipped policy no longer includes shared-server.yaml");
    rewriting =
        rewriting.replace(include, "- include: " + shipped.resolveSibling("shared-server.yaml"));
    Path rewritePolicy = Files.writeString(dir.resolve("mixed-lakehouse-rewrite.yaml"), rewriting);
    rewriteProxy =
        TestProxies.start(
            proxyConfig(dir, "rewrite", server.process().port(), rewritePolicy),
            recorder(rewrites));
    refuseProxy =
        TestProxies.start(
            proxyConfig(dir, "refuse", server.process().port(), shipped),
            recorder(forwardedByRefuseProxy));
    rewriteChannel = channel(rewriteProxy.port());
    refuseChannel = channel(refuseProxy.port());
    direct = new ConnectRequests(directChannel, "direct");
    viaRewrite = new ConnectRequests(rewriteChannel, "alice");
    viaRefuse = new ConnectRequests(refuseChannel, "alice");

    // Iceberg DDL and DML, through the rewriting proxy: three snapshots, {1,2} then {1,2,3} then
    // {1,3}.
    viaRewrite.sql("CREATE NAMESPACE IF NOT EXISTS iceberg.lake");
    viaRewrite.sql("CREATE TABLE " + TABLE + " (id BIGINT, city STRING) USING iceberg");
    viaRewrite.sql("INSERT INTO " + TABLE + " VALUES (1, 'sf'), (2, 'nyc')");
    viaRewrite.sql("INSERT INTO " + TABLE + " (id, city) VALUES (3, 'la')");
    viaRewrite.sql("DELETE FROM " + TABLE + " WHERE id = 2");
    for (List<Object> row :
        viaRewrite.sql(
            "SELECT snapshot_id, unix_millis(committed_at) FROM "
                + TABLE
                + ".snapshots ORDER BY committed_at")) {
      snapshots.add(new long[] {(Long) row.get(0), (Long) row.get(1)});
    }
    assertEquals(3, snapshots.size(), "three Iceberg snapshots");
    assertTrue(rewrites.isEmpty(), "no rewrite for plain Iceberg DDL/DML: " + rewrites);
  }

  @AfterAll
  static void stop() throws Exception {
    for (ManagedChannel c : new ManagedChannel[] {directChannel, rewriteChannel, refuseChannel}) {
      if (c != null) c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (rewriteProxy != null) rewriteProxy.close();
    if (refuseProxy != null) refuseProxy.close();
  }

  private static ProxyConfig proxyConfig(Path dir, String name, int backendPort, Path policy)
      throws Exception {
    Path file = dir.resolve(name + ".yaml");
    Files.writeString(
        file,
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: 0, plaintext: true, max_inbound_message_size: 64MiB}",
            "backend: {address: '127.0.0.1:" + backendPort + "'}",
            "policy: {file: '" + policy + "'}",
            "auth: {anonymous: true}",
            ""));
    return ProxyConfig.load(file);
  }

  /** Records the SQL of ExecutePlan requests as forwarded (after the policy stage). */
  private static CallHook.Factory recorder(List<String> into) {
    return (method, headers, transport) ->
        new CallHook() {
          @Override
          public byte[] onRequest(byte[] message) throws StatusException {
            if ("ExecutePlan".equals(method.getBareMethodName())) {
              try {
                String sql =
                    ExecutePlanRequest.parseFrom(message).getPlan().getRoot().getSql().getQuery();
                if (into != rewrites
                    || sql.contains(".snapshot_id_")
                    || sql.contains(".at_timestamp_")) {
                  into.add(sql);
                }
              } catch (java.io.IOException e) {
                throw Status.INTERNAL.withCause(e).asException();
              }
            }
            return message;
          }
        };
  }

  private static ManagedChannel channel(int port) {
    return Channels.plaintext(port).maxInboundMessageSize(64 * 1024 * 1024).build();
  }

  private static long firstSnapshot() {
    return snapshots.get(0)[0];
  }

  /** The first snapshot's commit time as a session-zone (UTC) timestamp string. */
  private static String firstCommitUtc() {
    return DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS")
        .withZone(ZoneOffset.UTC)
        .format(Instant.ofEpochMilli(snapshots.get(0)[1]));
  }

  /** The four SQL time-travel syntaxes on the first snapshot. */
  private static List<String> fourSyntaxes() {
    String ts = firstCommitUtc();
    return List.of(
        "SELECT id, city FROM " + TABLE + " VERSION AS OF " + firstSnapshot(),
        "SELECT id, city FROM " + TABLE + " FOR SYSTEM_VERSION AS OF " + firstSnapshot(),
        "SELECT id, city FROM " + TABLE + " TIMESTAMP AS OF '" + ts + "'",
        "SELECT id, city FROM " + TABLE + " FOR SYSTEM_TIME AS OF '" + ts + "'");
  }

  private static List<List<Object>> sorted(List<List<Object>> rows) {
    List<List<Object>> copy = new ArrayList<>(rows);
    copy.sort(Comparator.comparing(Object::toString));
    return copy;
  }

  private static List<List<Object>> snapshotRead() {
    return sorted(
        direct.read("iceberg", Map.of("snapshot-id", Long.toString(firstSnapshot())), TABLE));
  }

  @Test
  void hudiTableLifecyclePassesThroughSparkgate() {
    String t = "default.trips_cow";
    viaRewrite.sql(
        "CREATE TABLE "
            + t
            + " (uuid STRING, rider STRING, fare DOUBLE, ts BIGINT, city STRING) "
            + "USING hudi PARTITIONED BY (city) TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = 'cow')");
    viaRewrite.sql(
        "INSERT INTO "
            + t
            + " (uuid, rider, fare, ts, city) VALUES "
            + "('a', 'r1', 10.0, 1, 'sf'), ('b', 'r2', 20.0, 1, 'nyc')");
    viaRewrite.sql("UPDATE " + t + " SET fare = 15.0 WHERE uuid = 'a'");
    viaRewrite.sql(
        "MERGE INTO "
            + t
            + " AS target USING (SELECT 'c' AS uuid, 'r3' AS rider, 30.0D AS fare, 2L AS ts, "
            + "'sf' AS city) AS source ON target.uuid = source.uuid WHEN MATCHED THEN UPDATE SET * "
            + "WHEN NOT MATCHED THEN INSERT *");
    viaRewrite.sql("DELETE FROM " + t + " WHERE uuid = 'b'");
    assertEquals(
        List.of(List.of("a", 15.0), List.of("c", 30.0)),
        viaRewrite.sql("SELECT uuid, fare FROM " + t + " ORDER BY uuid"));

    List<List<Object>> commits =
        viaRewrite.sql("CALL show_commits(table => '" + t + "', limit => 10)");
    assertTrue(commits.size() >= 4, "commits: " + commits);
    List<List<Object>> metadata = viaRewrite.sql("SELECT count(*) FROM hudi_metadata('" + t + "')");
    assertTrue((Long) metadata.get(0).get(0) > 0, "hudi_metadata rows: " + metadata);

    // Hudi time travel to the first commit (the INSERT): passes both proxies untouched.
    String firstInstant =
        commits.stream().map(r -> r.get(0).toString()).min(String::compareTo).orElseThrow();
    String hudiTimeTravel =
        "SELECT uuid, fare FROM " + t + " TIMESTAMP AS OF '" + firstInstant + "' ORDER BY uuid";
    int before = rewrites.size();
    List<List<Object>> expected = List.of(List.of("a", 10.0), List.of("b", 20.0));
    assertEquals(expected, viaRewrite.sql(hudiTimeTravel));
    assertEquals(expected, viaRefuse.sql(hudiTimeTravel));
    assertEquals(before, rewrites.size(), "Hudi time travel is not rewritten");
    System.out.println(
        "Hudi: commits "
            + commits.size()
            + ", first instant "
            + firstInstant
            + ", hudi_metadata "
            + metadata);
  }

  /**
   * Hudi's compaction statements, which only Hudi's grammar reads, are decided by the shipped rules like any
   * statement instead of being refused as unparseable: on a table they pass and Hudi runs them; on a path of the
   * server's own file system the path rule refuses them before the server sees them. SHOW INDEXES, which
   * Spark's grammar reads as a Hive command Spark refuses, passes as Hudi's: Hudi's parser runs it first.
   */
  @Test
  void hudiCompactionIsDecidedByTheRules() {
    String t = "default.compaction_mor";
    viaRefuse.sql(
        "CREATE TABLE "
            + t
            + " (id STRING, fare DOUBLE, ts BIGINT) USING hudi "
            + "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor')");
    String show = "SHOW COMPACTION ON " + t + " LIMIT 5";
    assertEquals(List.of(), viaRefuse.sql(show));
    assertTrue(forwardedByRefuseProxy.contains(show));
    viaRefuse.sql("SHOW INDEXES FROM " + t);

    String local = "RUN COMPACTION ON '/tmp/sparkgate-compaction'";
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> viaRefuse.sql(local));
    assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode(), e.getStatus().toString());
    String message = e.getStatus().getDescription();
    assertTrue(
        message.contains("paths-allowlist") && message.contains("/tmp/sparkgate-compaction"),
        message);
    assertFalse(forwardedByRefuseProxy.contains(local), "refused SQL reached the server: " + local);
    System.out.println("refused: " + local + "\n  -> " + message);
  }

  /**
   * The bug is real: without Sparkgate each syntax fails with gRPC INTERNAL, the unresolved
   * {@code 'TimeTravelRelation} in the plan dump. Observed on 3.5.7: selecting columns reports
   * UNRESOLVED_COLUMN.WITHOUT_SUGGESTION and {@code SELECT *} INVALID_USAGE_OF_STAR_OR_REGEX (the analyzer
   * trips over the unresolved child before its INTERNAL_ERROR check that the reference quotes).
   */
  @Test
  void icebergSqlTimeTravelFailsDirectly() {
    List<String> cases = new ArrayList<>(fourSyntaxes());
    cases.add("SELECT * FROM " + TABLE + " VERSION AS OF " + firstSnapshot());
    for (String sql : cases) {
      StatusRuntimeException e =
          assertThrows(StatusRuntimeException.class, () -> direct.sql(sql), sql);
      assertEquals(Status.Code.INTERNAL, e.getStatus().getCode(), sql + ": " + e.getStatus());
      assertTrue(
          String.valueOf(e.getStatus().getDescription()).contains("TimeTravelRelation"),
          sql + ": " + e.getStatus());
      System.out.println("direct: " + sql + "\n  -> " + e.getStatus());
    }
  }

  @Test
  void icebergTableFormsAndReaderOptionWorkDirectly() {
    List<List<Object>> expected = snapshotRead();
    assertEquals(List.of(List.of(1L, "sf"), List.of(2L, "nyc")), expected);
    assertEquals(
        expected,
        sorted(direct.sql("SELECT id, city FROM " + TABLE + ".snapshot_id_" + firstSnapshot())));
    assertEquals(
        expected,
        sorted(
            direct.sql("SELECT id, city FROM " + TABLE + ".at_timestamp_" + snapshots.get(0)[1])));
  }

  @Test
  void rewrittenTimeTravelReturnsTheSnapshotReadRows() {
    List<List<Object>> expected = snapshotRead();
    for (String sql : fourSyntaxes()) {
      int before = rewrites.size();
      assertEquals(expected, sorted(viaRewrite.sql(sql)), sql);
      assertEquals(before + 1, rewrites.size(), sql);
      System.out.println("rewrite: " + rewrites.get(before));
    }
  }

  @Test
  void rewriteKeepsTableQualifiersAndQuotedNamesWorking() {
    List<List<Object>> expected = snapshotRead();
    long id = firstSnapshot();
    // The implicit alias: `trips.id` still resolves after the rewrite (the rewriter adds AS trips).
    assertEquals(
        expected,
        sorted(
            viaRewrite.sql("SELECT trips.id, trips.city FROM " + TABLE + " VERSION AS OF " + id)));
    assertEquals(
        expected,
        sorted(
            viaRewrite.sql(
                "SELECT trips.id, city FROM `iceberg`.`lake`.`trips` "
                    + "FOR SYSTEM_VERSION AS OF "
                    + id)));
    assertEquals(
        expected,
        sorted(
            viaRewrite.sql(
                "SELECT t.id, t.city FROM " + TABLE + " VERSION AS OF " + id + " AS t")));
    // Both sides of a join, a CTE and a subquery, with a string literal that mentions VERSION AS
    // OF.
    List<List<Object>> joined =
        viaRewrite.sql(
            "WITH old AS (SELECT id FROM "
                + TABLE
                + " VERSION AS OF "
                + id
                + ") "
                + "SELECT o.id, 'VERSION AS OF 1' AS note FROM old o JOIN "
                + TABLE
                + " FOR SYSTEM_TIME AS OF '"
                + firstCommitUtc()
                + "' n ON o.id = n.id WHERE o.id IN (SELECT id FROM "
                + TABLE
                + " VERSION AS OF "
                + id
                + ")");
    assertEquals(
        List.of(List.of(1L, "VERSION AS OF 1"), List.of(2L, "VERSION AS OF 1")), sorted(joined));
    // An explicit offset in the timestamp string wins over the session zone.
    String plus2 =
        DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS")
                .withZone(ZoneOffset.ofHours(2))
                .format(Instant.ofEpochMilli(snapshots.get(0)[1]))
            + "+02:00";
    assertEquals(
        expected,
        sorted(
            viaRewrite.sql("SELECT id, city FROM " + TABLE + " TIMESTAMP AS OF '" + plus2 + "'")));
  }

  @Test
  void refuseModeStopsEachSyntaxBeforeTheServer() {
    for (String sql : fourSyntaxes()) {
      StatusRuntimeException e =
          assertThrows(StatusRuntimeException.class, () -> viaRefuse.sql(sql), sql);
      assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode(), sql);
      String message = e.getStatus().getDescription();
      assertTrue(message.contains(TABLE) && message.contains("snapshot-id"), message);
      assertFalse(forwardedByRefuseProxy.contains(sql), "refused SQL reached the server: " + sql);
      System.out.println("refused: " + sql + "\n  -> " + message);
    }
    // Iceberg work without time travel passes the refusing proxy.
    assertEquals(List.of(List.of(2L)), viaRefuse.sql("SELECT count(*) FROM " + TABLE));
  }

  @Test
  void rewriteRefusesBranchNamesAndExpressions() {
    for (String sql :
        List.of(
            "SELECT * FROM " + TABLE + " VERSION AS OF 'main'",
            "SELECT * FROM " + TABLE + " TIMESTAMP AS OF current_timestamp() - INTERVAL 1 HOUR")) {
      StatusRuntimeException e =
          assertThrows(StatusRuntimeException.class, () -> viaRewrite.sql(sql), sql);
      assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode(), sql);
      assertTrue(e.getStatus().getDescription().contains(TABLE), e.getStatus().getDescription());
      System.out.println("rewrite refused: " + sql + "\n  -> " + e.getStatus().getDescription());
    }
  }
}
