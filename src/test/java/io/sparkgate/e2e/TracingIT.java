package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgate.Sparkgate;
import io.sparkgate.testing.AuditLines;
import io.sparkgate.testing.Await;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.spark.api.java.function.ForeachFunction;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Traces against the real Jaeger, the real Spark server and the real JVM client: a query sent with the
 * client's own {@code traceparent} appears in Jaeger as Sparkgate's server spans in that trace, children of
 * the client's span, with the call's attributes; a refused call's span shows its rule and an error; spans
 * leave over OTLP gRPC (one proxy, in this JVM) and OTLP HTTP (the shipped jar, flushing on SIGTERM); the
 * audit record carries the trace id.
 */
@ExtendWith(SparkServerExtension.class)
class TracingIT {
  private static final String TOKEN = "tracing-it-" + UUID.randomUUID();
  private static final String GRPC_SERVICE = "sparkgate-grpc-" + UUID.randomUUID();
  private static final String HTTP_SERVICE = "sparkgate-http-" + UUID.randomUUID();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final SecureRandom RANDOM = new SecureRandom();
  // The batch span processor exports every 5 s; Jaeger then stores within its 100 ms batch.
  private static final Duration EXPORTED = Duration.ofSeconds(30);

  private static JaegerServer jaeger;
  private static Sparkgate grpcProxy;
  private static Path httpDir;
  private static Path auditFile;
  private static int backendPort;

  @BeforeAll
  static void start(SparkConnectServerProcess server) throws Exception {
    Path binary = JaegerServer.binary();
    backendPort = server.port();
    Path dir = ProxyConfigs.freshDir("tracing");
    jaeger = JaegerServer.start(binary, dir);
    Await.until("Jaeger's query API", jaeger::ready);
    auditFile = dir.resolve("grpc").resolve("audit.jsonl");
    grpcProxy =
        Sparkgate.start(
            config(
                dir.resolve("grpc"),
                "http://127.0.0.1:" + jaeger.otlpGrpcPort,
                "grpc",
                GRPC_SERVICE));
    httpDir = dir.resolve("http");
  }

  private static io.sparkgate.config.ProxyConfig config(
      Path dir, String endpoint, String protocol, String service, String... more) throws Exception {
    java.nio.file.Files.createDirectories(dir);
    String sha =
        HexFormat.of()
            .formatHex(
                MessageDigest.getInstance("SHA-256")
                    .digest(TOKEN.getBytes(StandardCharsets.UTF_8)));
    List<String> lines = new ArrayList<>(List.of(more));
    if (lines.isEmpty()) lines.add(ProxyConfigs.PLAINTEXT_LISTENER);
    lines.addAll(
        List.of(
            ProxyConfigs.backend(backendPort),
            "auth:",
            "  static_tokens:",
            "    - {sha256: " + sha + ", principal: alice, groups: [analysts], tenant: acme}",
            ProxyConfigs.policy("shared-server.yaml"),
            "audit: {file: audit.jsonl, fsync: batch}",
            "tracing:",
            "  endpoint: " + endpoint,
            "  protocol: " + protocol,
            "  service_name: " + service));
    return ProxyConfigs.write(dir, lines.toArray(String[]::new));
  }

  @AfterAll
  static void stop() throws Exception {
    ProxyConfigs.closeAll(grpcProxy, jaeger);
  }

  private static String url(Sparkgate proxy) {
    return url(proxy.port());
  }

  private static String url(int port) {
    return "sc://localhost:" + port + "/;token=" + TOKEN;
  }

  @Test
  void queryWithTheClientsTraceparent_continuesItsTrace_withTheCallsAttributes() throws Exception {
    String traceId = hex(16);
    String clientSpan = hex(8);
    // The JVM client sends unknown connection-string parameters as headers, on every call.
    SparkSession spark =
        SparkClients.connect(
            url(grpcProxy) + ";traceparent=00-" + traceId + "-" + clientSpan + "-01");
    try {
      assertEquals(10, spark.sql("SELECT id FROM range(10)").collectAsList().size());
    } finally {
      spark.close();
    }

    JsonNode trace =
        Await.value(
            "the client's trace with an ExecutePlan span and the result's bytes in Jaeger",
            EXPORTED,
            () -> jaeger.trace(traceId),
            t -> t != null && span(t, "ExecutePlan") != null && bytesOut(t) > 0,
            jaeger::logText);
    JsonNode span = span(trace, "ExecutePlan");
    assertEquals(GRPC_SERVICE, service(trace, span));
    assertEquals("server", tag(span, "span.kind").asText());
    JsonNode parent = span.path("references").get(0);
    assertEquals("CHILD_OF", parent.path("refType").asText(), span.toString());
    assertEquals(traceId, parent.path("traceID").asText());
    assertEquals(clientSpan, parent.path("spanID").asText());
    assertEquals("ExecutePlan", tag(span, "rpc.method").asText());
    assertEquals("alice", tag(span, "sparkgate.principal").asText());
    assertEquals("acme", tag(span, "sparkgate.tenant").asText());
    assertEquals("allow", tag(span, "sparkgate.decision").asText());
    assertEquals(36, tag(span, "sparkgate.session_id").asText().length(), span.toString());
    assertEquals("default", tag(span, "sparkgate.pool").asText());
    assertEquals("127.0.0.1:" + backendPort, tag(span, "sparkgate.backend").asText());
    assertEquals(0, tag(span, "rpc.grpc.status_code").asLong());
    assertTrue(tag(span, "sparkgate.bytes_in").asLong() > 0, span.toString());
    // The test server cuts a reattachable stream after a second: the rows may come on a
    // ReattachExecute of the same trace rather than on this ExecutePlan.
    assertTrue(bytesOut(trace) > 0, trace.toString());
    assertTrue(span.path("logs").toString().contains("checked"), span.toString());
    for (String stage : List.of("authenticate", "route", "inspect and decide", "place")) {
      assertTrue(
          span.path("logs").toString().contains("stage " + stage), stage + ": " + span.toString());
    }
    // Every call of the session joins the trace (the client sends the header on each).
    assertTrue(trace.path("spans").size() >= 2, "one span per call: " + trace);

    JsonNode record =
        await(
            r ->
                "ExecutePlan".equals(r.path("rpc").asText())
                    && traceId.equals(r.path("trace_id").asText()));
    assertEquals(
        tag(span, "sparkgate.session_id").asText(),
        record.path("session_id").asText(),
        record.toString());
  }

  @Test
  void refusedCall_spanShowsItsRuleAndAnError_auditRecordNamesTheTrace() throws Exception {
    SparkSession spark = SparkClients.connect(url(grpcProxy));
    try {
      assertThrows(Exception.class, () -> spark.range(3).foreach((ForeachFunction<Long>) x -> {}));
    } finally {
      spark.close();
    }
    JsonNode record = await(r -> "deny".equals(r.path("decision").asText()));
    String traceId = record.path("trace_id").asText();
    assertEquals(32, traceId.length(), record.toString());

    JsonNode trace =
        Await.value(
            "the refused call's trace in Jaeger",
            EXPORTED,
            () -> jaeger.trace(traceId),
            t -> t != null && span(t, "ExecutePlan") != null,
            jaeger::logText);
    JsonNode span = span(trace, "ExecutePlan");
    assertEquals(0, span.path("references").size(), "a trace of its own: " + span);
    assertEquals("deny", tag(span, "sparkgate.decision").asText());
    assertEquals(record.path("rule").asText(), tag(span, "sparkgate.rule").asText());
    assertEquals("no-user-code", tag(span, "sparkgate.rule").asText());
    assertEquals(7, tag(span, "rpc.grpc.status_code").asLong()); // PERMISSION_DENIED
    assertTrue(tag(span, "error").asBoolean(), span.toString());
    assertEquals("ERROR", tag(span, "otel.status_code").asText());
  }

  /**
   * The proxy as operators run it (the shaded jar, whose exporters are found through its merged service
   * files), exporting over OTLP HTTP; stopped by SIGTERM right after the query, its queued spans still reach
   * Jaeger.
   */
  @Test
  void shippedJar_overOtlpHttp_spansFlushedOnSigterm() throws Exception {
    int port = freePort();
    int adminPort = freePort();
    config(
        httpDir,
        "http://127.0.0.1:" + jaeger.otlpHttpPort,
        "http/protobuf",
        HTTP_SERVICE,
        "listen: {address: 127.0.0.1, port: " + port + ", plaintext: true, drain_delay: 0s}",
        "admin: {port: " + adminPort + "}");
    Process proxy =
        ShippedJar.serve(httpDir.resolve("sparkgate.yaml"), httpDir, httpDir.resolve("proxy.log"));
    try {
      Await.until(
          "the shipped proxy to be ready",
          Duration.ofSeconds(60),
          () -> proxy.isAlive() && ready(adminPort),
          () -> log(httpDir.resolve("proxy.log")));
      SparkSession spark = SparkClients.connect(url(port));
      try {
        assertEquals(3, spark.sql("SELECT id FROM range(3)").collectAsList().size());
      } finally {
        spark.close();
      }
      proxy.destroy(); // SIGTERM
      assertTrue(proxy.waitFor(30, TimeUnit.SECONDS), log(httpDir.resolve("proxy.log")));
    } finally {
      proxy.destroyForcibly();
    }
    JsonNode traces =
        Await.value(
            "a trace of " + HTTP_SERVICE + " with an ExecutePlan span",
            Duration.ofSeconds(10),
            () -> jaeger.traces(HTTP_SERVICE),
            all -> anySpan(all, "ExecutePlan"),
            () -> log(httpDir.resolve("proxy.log")) + jaeger.logText());
    assertTrue(anySpan(traces, "ExecutePlan"));
  }

  private static boolean ready(int adminPort) throws Exception {
    try {
      return HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/readyz"))
                      .build(),
                  HttpResponse.BodyHandlers.discarding())
              .statusCode()
          == 200;
    } catch (java.io.IOException e) {
      return false;
    }
  }

  private static String log(Path file) {
    try {
      return java.nio.file.Files.readString(file);
    } catch (java.io.IOException e) {
      return "<no log: " + e + ">";
    }
  }

  private static int freePort() throws java.io.IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** What the trace's spans sent the client, together. */
  private static long bytesOut(JsonNode trace) {
    long sum = 0;
    for (JsonNode s : trace.path("spans")) {
      for (JsonNode t : s.path("tags")) {
        if (t.path("key").asText().equals("sparkgate.bytes_out")) sum += t.path("value").asLong();
      }
    }
    return sum;
  }

  private static boolean anySpan(JsonNode traces, String rpc) {
    for (JsonNode t : traces) {
      if (span(t, rpc) != null) return true;
    }
    return false;
  }

  /** The trace's span of {@code rpc}, or null. */
  private static JsonNode span(JsonNode trace, String rpc) {
    for (JsonNode s : trace.path("spans")) {
      if (s.path("operationName").asText().equals("spark.connect.SparkConnectService/" + rpc)) {
        return s;
      }
    }
    return null;
  }

  private static String service(JsonNode trace, JsonNode span) {
    return trace
        .path("processes")
        .path(span.path("processID").asText())
        .path("serviceName")
        .asText();
  }

  private static JsonNode tag(JsonNode span, String key) {
    for (JsonNode t : span.path("tags")) {
      if (t.path("key").asText().equals(key)) return t.path("value");
    }
    throw new AssertionError("no tag " + key + " in " + span);
  }

  private static String hex(int bytes) {
    byte[] b = new byte[bytes];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  /** The first audit record of the gRPC proxy matching {@code p}, waiting for the writer. */
  private static JsonNode await(Predicate<JsonNode> p) throws Exception {
    List<JsonNode> seen =
        Await.value("a matching audit record", TracingIT::records, r -> r.stream().anyMatch(p));
    return seen.stream().filter(p).findFirst().orElseThrow();
  }

  private static List<JsonNode> records() throws Exception {
    List<JsonNode> out = new ArrayList<>();
    if (!java.nio.file.Files.exists(auditFile)) return out;
    for (String line : AuditLines.complete(auditFile)) out.add(JSON.readTree(line));
    return out;
  }
}
