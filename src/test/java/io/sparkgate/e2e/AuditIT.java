package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgate.Sparkgate;
import io.sparkgate.audit.AuditVerifier;
import io.sparkgate.testing.AuditLines;
import io.sparkgate.testing.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.spark.api.java.function.ForeachFunction;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The audit log against the real server and client: who ran what, what the proxy decided, how it ended, and
 * how many rows came back, for an allowed query, a refused UDF, a failed query, a cancelled job and a long
 * result read across reattaches.
 */
@ExtendWith(SparkServerExtension.class)
class AuditIT {
  private static final String TOKEN = "audit-it-" + UUID.randomUUID();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern RUNNING_TASK = Pattern.compile("Executor: Running task ");

  private static Path auditFile;
  private static Sparkgate proxy;
  private static SparkSession spark;

  @BeforeAll
  static void start(SparkConnectServerProcess server) throws Exception {
    Path dir = ProxyConfigs.freshDir("audit");
    auditFile = dir.resolve("audit.jsonl");
    String sha =
        HexFormat.of()
            .formatHex(
                MessageDigest.getInstance("SHA-256")
                    .digest(TOKEN.getBytes(StandardCharsets.UTF_8)));
    proxy =
        Sparkgate.start(
            ProxyConfigs.write(
                dir,
                ProxyConfigs.PLAINTEXT_LISTENER,
                ProxyConfigs.backend(server.port()),
                "auth:",
                "  static_tokens:",
                "    - {sha256: " + sha + ", principal: alice, groups: [analysts], tenant: acme}",
                ProxyConfigs.policy("shared-server.yaml"),
                "audit: {file: audit.jsonl, fsync: batch}"));
    // localhost without TLS: the 4.0 JVM client then sends the token as "authorization: Bearer".
    spark = SparkClients.connect("sc://localhost:" + proxy.port() + "/;token=" + TOKEN);
  }

  @AfterAll
  static void stop() throws Exception {
    ProxyConfigs.closeAll(spark, proxy);
    AuditVerifier.Result chain = AuditVerifier.verify(List.of(auditFile));
    assertTrue(chain.ok(), chain.message());
  }

  @Test
  void allowedQuery_recordsWhoWhatDecisionAndRows() throws Exception {
    long mark = lines();
    assertEquals(
        1000,
        spark
            .sql("SELECT id, id * 2 AS twice FROM range(1000) WHERE id >= 0")
            .collectAsList()
            .size());

    // The result may arrive on the ExecutePlan stream or, when the server cuts that stream (1 s
    // here), on ReattachExecute calls: the records join on operation_id and their rows add up.
    JsonNode r =
        await(
            mark,
            rec ->
                rpc(rec, "ExecutePlan") && rowsOf(mark, rec.path("operation_id").asText()) == 1000);
    assertEquals("OK", r.path("status").asText());
    assertEquals("alice", r.path("principal").asText());
    assertEquals("acme", r.path("tenant").asText());
    assertEquals("static_token", r.path("auth_method").asText());
    assertEquals("allow", r.path("decision").asText());
    assertTrue(r.path("client_type").asText().contains("spark/4.0.0"), r.toString());
    assertEquals(36, r.path("session_id").asText().length(), r.toString());
    assertFalse(r.path("operation_id").asText().isEmpty(), r.toString());
    assertEquals(64, r.path("request_sha256").asText().length());
    assertTrue(r.path("bytes_out").asLong() > 0 && r.path("duration_ms").asLong() >= 0);
    String sql = r.path("plan_summary").toString();
    assertTrue(sql.contains("range(1000)") || sql.contains("range"), r.toString());
    assertFalse(r.toString().contains(TOKEN), "the token reached the audit log");
  }

  @Test
  void refusedUdf_recordsDenyAndRule() throws Exception {
    long mark = lines();
    assertThrows(Exception.class, () -> spark.range(3).foreach((ForeachFunction<Long>) x -> {}));

    JsonNode r = await(mark, rec -> "deny".equals(rec.path("decision").asText()));
    assertEquals("ExecutePlan", r.path("rpc").asText());
    assertEquals("PERMISSION_DENIED", r.path("status").asText());
    assertEquals("no-user-code", r.path("rule").asText());
    assertEquals("alice", r.path("principal").asText());
    assertEquals(0, r.path("result_rows").asLong());
    // The JVM client sends Dataset.foreach as a mapPartitions over a serialized Scala function.
    assertTrue(
        r.path("plan_summary").path("user_code").toString().contains("map_partitions"),
        r.toString());
  }

  @Test
  void failedQuery_recordsTheErrorStatus() throws Exception {
    long mark = lines();
    assertThrows(
        Exception.class, () -> spark.sql("SELECT * FROM audit_it_no_such_table").collectAsList());

    // The error reaches the client on the ExecutePlan stream, or on a ReattachExecute when the
    // server cut the first stream (1 s here) before analysis finished: either way the records join
    // on operation_id.
    JsonNode failed =
        await(
            mark,
            rec ->
                !"OK".equals(rec.path("status").asText())
                    && rec.path("status_message").asText().contains("TABLE_OR_VIEW_NOT_FOUND"));
    String operation = failed.path("operation_id").asText();
    JsonNode r =
        await(
            mark,
            rec -> rpc(rec, "ExecutePlan") && operation.equals(rec.path("operation_id").asText()));
    assertEquals("allow", r.path("decision").asText());
    assertEquals(
        "[\"spark_catalog.default.audit_it_no_such_table\"]",
        r.path("plan_summary").path("tables_read").toString(),
        r.toString());
  }

  @Test
  void cancelledJob_recordsTheInterruptAndTheCancelledExecution(SparkConnectServerProcess server)
      throws Exception {
    long mark = lines();
    String tag = "audit-it-" + UUID.randomUUID();
    long logMark = server.logLineCount();
    CompletableFuture<Object> job =
        CompletableFuture.supplyAsync(
            () -> {
              spark.addTag(tag);
              try {
                return spark.range(0, Long.MAX_VALUE / 2).selectExpr("max(xxhash64(id))").first();
              } finally {
                spark.removeTag(tag);
              }
            });
    try {
      // Interrupt only once tasks run: interrupting during planning can orphan the job in Spark
      // 4.0.
      server.awaitLogLine(RUNNING_TASK, logMark, Duration.ofSeconds(60));
      spark.interruptTag(tag);
      assertThrows(Exception.class, () -> job.get(60, TimeUnit.SECONDS));
    } finally {
      spark.interruptTag(tag);
      job.cancel(true);
    }
    JsonNode interrupt = await(mark, rec -> rpc(rec, "Interrupt"));
    assertEquals("OK", interrupt.path("status").asText());
    JsonNode cancelled =
        await(
            mark,
            rec ->
                (rpc(rec, "ExecutePlan") || rpc(rec, "ReattachExecute"))
                    && rec.path("status_message").asText().contains("OPERATION_CANCELED"));
    assertFalse("OK".equals(cancelled.path("status").asText()), cancelled.toString());
  }

  @Test
  void reattachedLongResult_recordsJoinOnOperationIdAndRowsAddUp() throws Exception {
    long mark = lines();
    long expected = 300_000;
    assertEquals(
        expected,
        SparkClients.countRows(
            spark.range(0, expected, 1, 8).selectExpr("id", "repeat('x', 60) AS pad")));

    // The last reattach record is written when its call ends: wait until the rows add up. An
    // earlier test's records can still be on their way to the file after the mark, so the reattach
    // is found by its rows.
    JsonNode reattach =
        await(
            mark,
            rec ->
                rpc(rec, "ReattachExecute")
                    && rowsOf(mark, rec.path("operation_id").asText()) == expected);
    String operation = reattach.path("operation_id").asText();
    List<JsonNode> parts =
        records(mark).stream()
            .filter(
                rec ->
                    operation.equals(rec.path("operation_id").asText())
                        && (rpc(rec, "ExecutePlan") || rpc(rec, "ReattachExecute")))
            .toList();
    assertEquals(1, parts.stream().filter(rec -> rpc(rec, "ExecutePlan")).count());
    assertTrue(parts.size() >= 3, "expected several reattaches: " + parts.size());
    Map<String, Long> principals =
        parts.stream()
            .collect(
                Collectors.groupingBy(
                    rec -> rec.path("principal").asText(), Collectors.counting()));
    assertEquals(Map.of("alice", (long) parts.size()), principals);
  }

  /** Result rows of one operation across its ExecutePlan and ReattachExecute records. */
  private static long rowsOf(long mark, String operation) {
    try {
      return records(mark).stream()
          .filter(
              rec ->
                  operation.equals(rec.path("operation_id").asText())
                      && (rpc(rec, "ExecutePlan") || rpc(rec, "ReattachExecute")))
          .mapToLong(rec -> rec.path("result_rows").asLong())
          .sum();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static boolean rpc(JsonNode record, String name) {
    return name.equals(record.path("rpc").asText());
  }

  private static long lines() throws Exception {
    return records(0).size();
  }

  private static List<JsonNode> records(long skip) throws Exception {
    List<JsonNode> out = new ArrayList<>();
    List<String> all = AuditLines.complete(auditFile);
    for (int i = (int) skip; i < all.size(); i++) {
      out.add(JSON.readTree(all.get(i)));
    }
    return out;
  }

  /** The first record after {@code mark} matching {@code p}, waiting for the writer (records are async). */
  private static JsonNode await(long mark, Predicate<JsonNode> p) throws Exception {
    List<JsonNode> seen =
        Await.value(
            "a matching audit record after line " + mark,
            () -> records(mark),
            records -> records.stream().anyMatch(p));
    return seen.stream().filter(p).findFirst().orElseThrow();
  }
}
