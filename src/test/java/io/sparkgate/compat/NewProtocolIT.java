package io.sparkgate.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgate.e2e.SparkConnectServerProcess;
import io.sparkgate.testing.AuditLines;
import io.sparkgate.testing.DebianPackages;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The protocol features of Spark 4.1 and later, driven by a real PySpark 4.3 client ({@code
 * src/test/python/compat/new_protocol_client.py}) through Sparkgate (TLS, tokens, the shipped shared-server
 * policy, audit on) to a real Spark 4.3 Connect server (the {@code pyspark} wheel's jars): compressed plans,
 * chunked Arrow results, CloneSession and GetStatus. One server and one proxy, shared by the tests.
 *
 * <p>The server forces plan compression ({@code spark.connect.session.planCompression.threshold=1}, which the
 * client reads through a Config call when its session starts), so every plan that zstd shrinks at all goes
 * out compressed. The proxy has a second user, to show that one user cannot reach another's session, and
 * bounds inflated plans at {@link #MAX_INFLATED} (the least {@code policy.max_decompressed_plan_bytes}
 * allows). Where the proxy refuses something, the same step straight to the server shows that Spark itself
 * would have run it.
 *
 * <p>GetStatus: no public API of PySpark 4.3 or the JVM client 4.2 sends it; each has a client method that
 * nothing else calls (PySpark's {@code SparkConnectClient._get_operation_statuses}, the JVM's {@code
 * SparkConnectClient.getOperationStatuses}). The test calls PySpark's, so the request is the client's own.
 */
final class NewProtocolIT {
  private static final String VERSION = "4.3.0";
  private static final String OTHER = "other-user";
  private static final String OTHER_TOKEN_ENV = "SPARKGATE_COMPAT_OTHER_TOKEN";
  private static final Path PROGRAM =
      Path.of("src", "test", "python", "compat", "new_protocol_client.py");
  private static final long MAX_INFLATED = 1 << 20;
  private static final int CHUNKED_ROWS = 120_000;
  private static final Duration AUDIT_WAIT = Duration.ofSeconds(30);
  private static final ObjectMapper JSON = new ObjectMapper();

  private static final PySparkClient CLIENT = PySparkClient.full(VERSION);
  private static SparkConnectServerProcess server;
  private static CompatProxy proxy;
  private static Target direct;

  /** Each step's report, through the proxy and straight to the server (one client process each). */
  private static Map<String, JsonNode> viaProxy;

  private static Map<String, JsonNode> straight;

  @BeforeAll
  static void start() throws Exception {
    DebianPackages.require(
        "python3-venv",
        "python3 -m venv, for the PySpark 4.3 client and the Spark 4.3 server's jars",
        () -> PythonEnvs.unavailable().isEmpty() ? "python3" : null);
    long t0 = System.nanoTime();
    Path dir =
        Files.createTempDirectory(
                Files.createDirectories(Path.of("target", "compat")), "new-protocol-")
            .toAbsolutePath();
    Map<String, String> conf = new LinkedHashMap<>(CompatServers.SHARED_CONF);
    conf.put("spark.connect.session.planCompression.threshold", "1");
    server = new WheelSparkServer(VERSION).start(dir.resolve("server"), conf);
    assertEquals(VERSION, server.sparkVersion(), "the server is not the version asked for");
    proxy =
        CompatProxy.start(
            dir.resolve("proxy"),
            server.port(),
            VERSION,
            new CompatProxy.Options(
                List.of(
                    new CompatProxy.User(CompatProxy.PRINCIPAL, List.of()),
                    new CompatProxy.User(OTHER, List.of())),
                Map.of("max_decompressed_plan_bytes", Long.toString(MAX_INFLATED)),
                List.of()));
    direct = Target.direct("localhost", server.port(), VERSION);
    System.out.printf(
        "NewProtocolIT: Spark %s and the proxy up in %d s%n",
        VERSION, (System.nanoTime() - t0) / 1_000_000_000L);
    viaProxy =
        run(
            proxy.target(),
            List.of(
                "compressed_query", "python_udf", "large_literal", "chunked", "clone", "status"));
    // Straight to Spark, what the proxy refuses or must pass through unchanged.
    straight = run(direct, List.of("python_udf", "large_literal", "chunked"));
  }

  @AfterAll
  static void stop() {
    if (proxy != null) {
      proxy.close();
    }
    if (server != null) {
      server.stop();
    }
  }

  // --- compressed plans -----------------------------------------------------------------------

  @Test
  void compressedPlan_dataFrameQuery_rightRows_andTheProxyInspectedItCompressed() throws Exception {
    JsonNode r = step(viaProxy, "compressed_query");

    assertEquals(1, r.path("threshold").asInt(), "the client read the server's threshold: " + r);
    assertEquals("ZSTD", r.path("algorithm").asText(), r.toString());
    assertTrue(r.path("compressed").asInt() >= 1, "the client sent no compressed plan: " + r);
    assertEquals(15, r.path("rows").asInt(), r.toString());
    assertTrue(r.path("rows_ok").asBoolean(), "wrong rows: " + r);
    JsonNode record =
        audited(
            "ExecutePlan",
            r.path("session_id").asText(),
            CompatProxy.PRINCIPAL,
            a -> a.path("plan_summary").path("compressed").asBoolean());
    assertEquals("OK", record.path("status").asText(), record.toString());
  }

  @Test
  void compressedPlan_pythonUdf_refusedByNoUserCode_whereSparkWouldRunIt() throws Exception {
    JsonNode r = step(viaProxy, "python_udf");

    assertTrue(r.path("compressed").asInt() >= 1, "the UDF's plan was not compressed: " + r);
    assertFalse(r.has("ran"), "the UDF ran through the proxy: " + r);
    String error = r.path("error").asText();
    assertTrue(error.contains("no-user-code"), "the refusal does not name the rule: " + error);
    assertNotInternal(r);
    JsonNode record = refusal(r.path("session_id").asText(), "no-user-code");
    assertTrue(record.path("plan_summary").path("compressed").asBoolean(), record.toString());
    assertTrue(
        record.path("plan_summary").path("user_code").toString().contains("python_udf"),
        record.toString());

    // Direct rerun: the server accepts the same compressed plan and starts a Python worker for it.
    JsonNode d = step(straight, "python_udf");
    assertTrue(d.path("compressed").asInt() >= 1, d.toString());
    assertTrue(
        d.has("ran") || d.path("error").asText().toLowerCase(Locale.ROOT).contains("python worker"),
        "straight to Spark the UDF is neither run nor sent to a Python worker: " + d);
  }

  @Test
  void compressedPlan_inflatingPastTheBound_refusedWithAClearMessage_whereSparkAcceptsIt()
      throws Exception {
    JsonNode r = step(viaProxy, "large_literal");

    assertTrue(r.path("compressed").asInt() >= 1, "the large plan was not compressed: " + r);
    assertFalse(r.has("ran"), "the plan ran through the proxy: " + r);
    String error = r.path("error").asText();
    assertTrue(
        error.contains("compressed_plan_too_large") && error.contains("no-unclassified"),
        "the refusal does not say what and which rule: " + error);
    assertNotInternal(r);
    JsonNode record = refusal(r.path("session_id").asText(), "no-unclassified");
    assertTrue(
        record
            .path("plan_summary")
            .path("unclassified")
            .toString()
            .contains("compressed_plan_too_large"),
        record.toString());

    // Direct rerun: Spark's own bound (spark.connect.maxPlanSize, 512 MiB) lets it through.
    JsonNode d = step(straight, "large_literal");
    assertEquals(2 << 20, d.path("ran").asInt(), "Spark itself refused it: " + d);
  }

  // --- chunked Arrow results --------------------------------------------------------------------

  @Test
  void chunkedArrowResult_sameRowsAndChecksumAsDirect() throws Exception {
    JsonNode p = step(viaProxy, "chunked");
    JsonNode d = step(straight, "chunked");

    assertEquals(CHUNKED_ROWS, p.path("rows").asInt(), p.toString());
    assertTrue(p.path("arrow_bytes").asLong() > 4L << 20, "not several MiB: " + p);
    assertTrue(
        p.path("chunked_responses").asInt() > 0 && p.path("max_chunks").asInt() > 1,
        "the server sent no chunked Arrow batch through the proxy: " + p);
    assertEquals(CHUNKED_ROWS, d.path("rows").asInt(), d.toString());
    assertEquals(
        d.path("checksum").asText(), p.path("checksum").asText(), "proxied " + p + " direct " + d);
    audited(
        "ExecutePlan",
        p.path("session_id").asText(),
        CompatProxy.PRINCIPAL,
        a -> "OK".equals(a.path("status").asText()));
  }

  // --- CloneSession -----------------------------------------------------------------------------

  @Test
  void cloneSession_sameUser_works_underTheSamePrincipal_andAnotherUserNamingTheSessionIsIsolated()
      throws Exception {
    JsonNode r = step(viaProxy, "clone");
    String source = r.path("session_id").asText();
    String clone = r.path("clone_id").asText();

    assertEquals(r.path("asked_clone_id").asText(), clone, r.toString());
    assertEquals(
        "[42]", r.path("clone_rows").toString(), "the clone lacks its source's view: " + r);
    assertFalse(r.path("source_sees_clone_view").asBoolean(true), r.toString());
    JsonNode cloned = audited("CloneSession", source, CompatProxy.PRINCIPAL, a -> true);
    assertEquals(clone, cloned.path("new_session_id").asText(), cloned.toString());
    assertEquals("OK", cloned.path("status").asText(), cloned.toString());
    // The clone's own calls are the same user's.
    audited(
        "ExecutePlan", clone, CompatProxy.PRINCIPAL, a -> "OK".equals(a.path("status").asText()));

    // The other user names the same session id: the proxy puts its own identity in the request, so
    // the server gives it a session of its own, without the first user's view, and clones only
    // that.
    assertFalse(r.has("other_rows"), "another user read the first user's view: " + r);
    assertEquals(
        "TABLE_OR_VIEW_NOT_FOUND", r.path("other_error").path("condition").asText(), r.toString());
    if (!r.has("other_clone_refused")) {
      assertFalse(
          r.has("other_clone_rows"), "another user's clone has the first user's view: " + r);
      assertEquals(
          "TABLE_OR_VIEW_NOT_FOUND",
          r.path("other_clone_error").path("condition").asText(),
          r.toString());
    }
    audited("CloneSession", source, OTHER, a -> true);
  }

  // --- GetStatus --------------------------------------------------------------------------------

  @Test
  void getStatus_asPySpark43SendsIt_answersForTheCallersSessionOnly() throws Exception {
    JsonNode r = step(viaProxy, "status");
    String session = r.path("session_id").asText();

    assertEquals(session, r.path("response_session_id").asText(), r.toString());
    JsonNode statuses = r.path("statuses");
    assertTrue(statuses.size() >= 1, "no operation in the session's status: " + r);
    statuses.forEach(
        s ->
            assertTrue(
                Set.of(
                        "OPERATION_STATE_SUCCEEDED",
                        "OPERATION_STATE_TERMINATING",
                        "OPERATION_STATE_CLOSED")
                    .contains(s.asText()),
                "a finished query in state " + s + ": " + r));
    assertEquals(
        "OPERATION_STATE_UNKNOWN",
        r.path("unknown_asked").path(r.path("unknown_id").asText()).asText(),
        r.toString());
    // The other user naming that session sees none of the first user's operations: the proxy puts
    // its identity in the request, and the server has no session of that user under that id.
    if (r.has("other_error")) {
      assertEquals(
          "INVALID_HANDLE.SESSION_NOT_FOUND",
          r.path("other_error").path("condition").asText(),
          r.toString());
    } else {
      List<String> leaked = new ArrayList<>();
      statuses
          .fieldNames()
          .forEachRemaining(
              id -> {
                if (r.path("other_statuses").has(id)) {
                  leaked.add(id);
                }
              });
      assertTrue(leaked.isEmpty(), "another user saw operations " + leaked + ": " + r);
    }
    JsonNode record = audited("GetStatus", session, CompatProxy.PRINCIPAL, a -> true);
    assertEquals("OK", record.path("status").asText(), record.toString());
  }

  // --- helpers ----------------------------------------------------------------------------------

  /**
   * Runs the client program's steps in one process (the other user's token in its environment when it goes
   * through the proxy) and returns each step's report by name.
   */
  private static Map<String, JsonNode> run(Target target, List<String> steps) throws Exception {
    long t0 = System.nanoTime();
    Map<String, String> env =
        target.isDirect() ? Map.of() : Map.of(OTHER_TOKEN_ENV, proxy.target(OTHER).token());
    PySparkClient.Run run = CLIENT.runProgram(PROGRAM, target, env, steps);
    Map<String, JsonNode> reports = new LinkedHashMap<>();
    for (String line :
        Files.readAllLines(run.dir().resolve("stdout.jsonl"), StandardCharsets.UTF_8)) {
      if (line.startsWith("{\"step\"")) {
        JsonNode report = JSON.readTree(line);
        reports.put(report.path("step").asText(), report);
        System.out.printf(
            "NewProtocolIT: %s %s in %.1f s%n",
            report.path("step").asText(),
            target.isDirect() ? "direct" : "through the proxy",
            report.path("seconds").asDouble());
      }
    }
    System.out.printf(
        "NewProtocolIT: %d steps %s in %d ms (exit %d, %s)%n",
        steps.size(),
        target.isDirect() ? "direct" : "through the proxy",
        (System.nanoTime() - t0) / 1_000_000,
        run.exitCode(),
        run.dir());
    if (reports.size() < steps.size()) {
      // Shown with the step that lacks a report; the others still run their assertions.
      System.out.println(
          "NewProtocolIT: the client's last output:\n"
              + PySparkClient.tail(run.dir().resolve("stderr.log")));
    }
    return reports;
  }

  /** A step's report; the test fails if the step did not report or failed outright. */
  private static JsonNode step(Map<String, JsonNode> reports, String step) {
    JsonNode report = reports.get(step);
    if (report == null || report.path("failed").asBoolean()) {
      fail(
          step
              + (reports == straight ? " straight to Spark" : " through the proxy")
              + (report == null
                  ? " printed nothing (see the client's output above)"
                  : " failed: " + report));
    }
    return report;
  }

  private static void assertNotInternal(JsonNode r) {
    String code = r.path("grpc_code").asText();
    assertNotEquals("INTERNAL", code, r.toString());
    assertFalse(r.path("error").asText().contains("INTERNAL_ERROR"), r.toString());
    assertTrue(
        Set.of("PERMISSION_DENIED", "FAILED_PRECONDITION", "").contains(code),
        "a policy refusal should be non-retryable: " + r);
  }

  /** The proxy's record of a refused call in {@code session} by {@code rule}, for the first user. */
  private static JsonNode refusal(String session, String rule) throws Exception {
    JsonNode record =
        audited(
            "ExecutePlan",
            session,
            CompatProxy.PRINCIPAL,
            a -> rule.equals(a.path("rule").asText()));
    assertNotEquals("OK", record.path("status").asText(), record.toString());
    return record;
  }

  /**
   * The first audit record of a {@code rpc} call in {@code session} by {@code principal} that also passes
   * {@code also}.
   */
  private static JsonNode audited(
      String rpc, String session, String principal, Predicate<JsonNode> also) throws Exception {
    return auditRecord(
        rpc + " by " + principal + " in session " + session,
        a ->
            rpc.equals(a.path("rpc").asText())
                && session.equals(a.path("session_id").asText())
                && principal.equals(a.path("principal").asText())
                && also.test(a));
  }

  /** The first audit record matching {@code test}, waiting for the writer (it writes behind the calls). */
  private static JsonNode auditRecord(String what, Predicate<JsonNode> test) throws Exception {
    long deadline = System.nanoTime() + AUDIT_WAIT.toNanos();
    while (true) {
      List<JsonNode> found = auditRecords(test);
      if (!found.isEmpty()) {
        return found.get(0);
      }
      if (System.nanoTime() > deadline) {
        fail("no audit record of " + what + " in " + proxy.auditLog());
      }
      Thread.sleep(200);
    }
  }

  private static List<JsonNode> auditRecords(Predicate<JsonNode> test) throws IOException {
    List<JsonNode> found = new ArrayList<>();
    for (String line : AuditLines.complete(proxy.auditLog())) {
      JsonNode record = JSON.readTree(line);
      if (test.test(record)) {
        found.add(record);
      }
    }
    return found;
  }
}
