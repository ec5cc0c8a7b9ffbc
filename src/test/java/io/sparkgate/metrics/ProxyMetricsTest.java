package io.sparkgate.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.sparkgate.Sparkgate;
import io.sparkgate.bench.BenchBackend;
import io.sparkgate.bench.BenchProtocol;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.MetricsScrape;
import io.sparkgate.tls.DevCertificates;
import io.sparkgate.tls.ServerTls;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.connect.proto.ExecutePlanRequest;
import org.apache.spark.connect.proto.Plan;
import org.apache.spark.connect.proto.Relation;
import org.apache.spark.connect.proto.SQL;
import org.apache.spark.connect.proto.UserContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The metrics endpoint of a proxy with static-token authentication, the shipped policy and audit, in front of
 * the benchmark's fake backend: an answered call, one refused by authentication and one refused by policy
 * each show up under their method, code, reason and rule, and nothing secret does. (PolicyIT checks the same
 * against a real Spark server and client.)
 */
final class ProxyMetricsTest {
  private static final String TOKEN = "metrics-test-token-0123456789";

  @TempDir Path dir;
  private BenchBackend backend;
  private Sparkgate proxy;
  private ManagedChannel channel;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void start() throws Exception {
    backend = BenchBackend.start(0);
    String sha =
        HexFormat.of()
            .formatHex(
                MessageDigest.getInstance("SHA-256")
                    .digest(TOKEN.getBytes(StandardCharsets.UTF_8)));
    Path config = dir.resolve("sparkgate.yaml");
    Files.writeString(
        config,
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: 0, plaintext: true}",
            "backend: {address: '127.0.0.1:" + backend.port() + "'}",
            "auth:",
            "  static_tokens:",
            "    - {sha256: " + sha + ", principal: alice}",
            "policy: {file: " + Path.of("policies/shared-server.yaml").toAbsolutePath() + "}",
            "audit: {file: " + dir.resolve("audit.jsonl") + "}",
            "metrics: {address: 127.0.0.1, port: 0}",
            ""));
    proxy = Sparkgate.start(ProxyConfig.load(config));
    channel = Channels.plaintext(proxy.port()).build();
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow();
    proxy.close();
    backend.close();
  }

  @Test
  void callsRefusalsDecisionsAndAudit_countedWithoutSecrets() throws Exception {
    Map<String, Double> before = scrape();
    assertEquals(0.0, before.get("sparkgate_calls_active"));
    assertEquals(
        0.0,
        before.get("sparkgate_auth_failures_total{reason=no_credentials}"),
        "every refusal reason is shown from the start");
    assertTrue(
        before.containsKey("sparkgate_backend_profile_known{pool=default}"),
        before.keySet().toString());

    // Answered: three 1 KiB batches.
    int received = 0;
    for (Iterator<Integer> it =
            ClientCalls.blockingServerStreamingCall(
                authenticated(),
                BenchProtocol.EXECUTE_PLAN,
                CallOptions.DEFAULT,
                BenchProtocol.executePlanRequest("s1", 1024, 3));
        it.hasNext();
        it.next()) {
      received++;
    }
    assertEquals(3, received);
    // Refused by authentication: no token.
    assertEquals(
        Status.Code.UNAUTHENTICATED,
        refused(channel, BenchProtocol.executePlanRequest("s2", 1024, 1)));
    // Refused by policy: reflect() runs Java.
    assertEquals(
        Status.Code.PERMISSION_DENIED,
        refused(authenticated(), sql("SELECT reflect('java.lang.System', 'exit', 0)")));

    // The audit writer is a thread of its own.
    Map<String, Double> after =
        Await.value(
            "the three calls' audit records to be written",
            this::scrape,
            m -> m.getOrDefault("sparkgate_audit_records_written_total", 0.0) >= 3);
    assertEquals(1.0, after.get("sparkgate_calls_total{code=OK,method=ExecutePlan}"));
    assertEquals(1.0, after.get("sparkgate_calls_total{code=UNAUTHENTICATED,method=ExecutePlan}"));
    assertEquals(
        1.0, after.get("sparkgate_calls_total{code=PERMISSION_DENIED,method=ExecutePlan}"));
    assertEquals(3.0, after.get("sparkgate_call_duration_seconds_count{method=ExecutePlan}"));
    assertEquals(
        3.0, after.get("sparkgate_call_duration_seconds_bucket{le=+Inf,method=ExecutePlan}"));
    assertEquals(0.0, after.get("sparkgate_calls_active"));
    assertEquals(1.0, after.get("sparkgate_auth_failures_total{reason=no_credentials}"));
    assertEquals(
        1.0,
        after.get(
            "sparkgate_policy_decisions_total{outcome=deny,pool=default,rule=no-reflection}"));
    assertTrue(
        after.entrySet().stream()
            .anyMatch(
                e ->
                    e.getKey().startsWith("sparkgate_policy_decisions_total{outcome=allow,")
                        && e.getValue() == 1.0),
        "the answered call's allow decision: " + after);
    assertEquals(3.0, after.get("sparkgate_audit_records_written_total"));
    assertEquals(0.0, after.get("sparkgate_audit_records_dropped_total"));
    assertTrue(
        after.get("sparkgate_backend_connections{state=ready}") >= 1,
        "the backend connection is up");
    assertEquals(0.0, after.get("sparkgate_unknown_methods_total"));
    assertTrue(
        after.keySet().stream().anyMatch(k -> k.startsWith("jvm_memory_used_bytes{")),
        "JVM meters too");

    String text = get("/metrics").body();
    assertFalse(text.contains(TOKEN), "the token never appears");
    assertFalse(text.contains("alice"), "nor any principal");
    assertFalse(text.contains("java.lang.System"), "nor anything from a request");
  }

  @Test
  void onlyGetAndHeadOnTheConfiguredPath() throws Exception {
    HttpResponse<String> ok = get("/metrics");
    assertEquals(200, ok.statusCode());
    assertEquals(
        MetricsEndpoint.CONTENT_TYPE, ok.headers().firstValue("content-type").orElseThrow());
    assertEquals(404, get("/").statusCode());
    assertEquals(404, get("/metrics/x").statusCode());
    HttpResponse<String> post =
        http.send(
            request("/metrics").POST(HttpRequest.BodyPublishers.ofString("x")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(405, post.statusCode());
    assertEquals("GET, HEAD", post.headers().firstValue("allow").orElseThrow());
    HttpResponse<String> head =
        http.send(
            request("/metrics").method("HEAD", HttpRequest.BodyPublishers.noBody()).build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, head.statusCode());
    assertEquals("", head.body());
  }

  /** A client that opens connections and never finishes its request must not keep the scraper out. */
  @Test
  void stalledClients_doNotBlockScrapes() throws Exception {
    List<Socket> stalled = new ArrayList<>();
    try {
      for (int i = 0; i < 20; i++) {
        Socket s = new Socket("127.0.0.1", proxy.metricsPort());
        s.getOutputStream().write("GET /metr".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        stalled.add(s);
      }
      HttpResponse<String> ok =
          http.sendAsync(request("/metrics").GET().build(), HttpResponse.BodyHandlers.ofString())
              .get(5, TimeUnit.SECONDS);
      assertEquals(200, ok.statusCode());
    } finally {
      for (Socket s : stalled) {
        s.close();
      }
    }
  }

  /** Connections beyond the cap are closed at once; the scraper gets in again as soon as some go. */
  @Test
  void connectionsBeyondTheCap_closed() throws Exception {
    List<Socket> held = new ArrayList<>();
    try {
      for (int i = 0; i < MetricsEndpoint.MAX_CONNECTIONS; i++) {
        held.add(new Socket("127.0.0.1", proxy.metricsPort()));
      }
      // No wait for the endpoint to accept them: its one event loop takes connections in the order
      // the kernel
      // completed them, so the extra one is counted after all of these.
      try (Socket extra = new Socket("127.0.0.1", proxy.metricsPort())) {
        extra.setSoTimeout(5000);
        assertEquals(-1, extra.getInputStream().read(), "one more is closed without an answer");
      }
      for (Socket s : held) {
        s.close();
      }
      // The endpoint notices the closed connections on its own loop, a moment later.
      Await.value(
          "the endpoint to serve again once the held connections went",
          () -> {
            try {
              return get("/metrics").statusCode();
            } catch (IOException closedWhileFull) {
              return 0;
            }
          },
          status -> status == 200);
    } finally {
      for (Socket s : held) {
        s.close();
      }
    }
  }

  @Test
  void servedCertificateExpiry_isAGauge() throws Exception {
    DevCertificates.Generated certs =
        DevCertificates.generate(
            dir.resolve("certs"),
            DevCertificates.Options.defaults().withValidity(Duration.ofDays(3)));
    ServerTls tls = ServerTls.load(certs.serverCert(), certs.serverKey(), null, null);
    try (ProxyMetrics metrics = ProxyMetrics.create()) {
      metrics.watch(tls);
      double notAfter =
          MetricsScrape.parse(metrics.scrape()).get("sparkgate_tls_certificate_not_after_seconds");
      assertEquals(tls.certificateNotAfter().getEpochSecond(), (long) notAfter);
      double days = (notAfter - System.currentTimeMillis() / 1000.0) / 86_400;
      assertTrue(days > 2.9 && days < 3.1, "about three days left: " + days);
    } finally {
      tls.close();
    }
  }

  private Channel authenticated() {
    return ClientInterceptors.intercept(channel, Channels.bearer(TOKEN));
  }

  private static Status.Code refused(Channel channel, byte[] request) {
    return assertThrows(
            StatusRuntimeException.class,
            () ->
                ClientCalls.blockingServerStreamingCall(
                        channel, BenchProtocol.EXECUTE_PLAN, CallOptions.DEFAULT, request)
                    .forEachRemaining(n -> {}))
        .getStatus()
        .getCode();
  }

  private static byte[] sql(String query) {
    return ExecutePlanRequest.newBuilder()
        .setSessionId("00000000-0000-0000-0000-000000000001")
        .setUserContext(UserContext.newBuilder().setUserId("alice"))
        .setPlan(
            Plan.newBuilder()
                .setRoot(Relation.newBuilder().setSql(SQL.newBuilder().setQuery(query))))
        .build()
        .toByteArray();
  }

  private HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + proxy.metricsPort() + path));
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  private Map<String, Double> scrape() throws Exception {
    return MetricsScrape.get(proxy.metricsPort());
  }
}
