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
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.Map;
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
  void scrapeServedOnTheAdminListener_inPrometheusTextFormat() throws Exception {
    HttpResponse<String> ok = get("/metrics");
    assertEquals(200, ok.statusCode());
    assertEquals(
        "text/plain; version=0.0.4; charset=utf-8",
        ok.headers().firstValue("content-type").orElseThrow());
    assertEquals(404, get("/metrics/x").statusCode());
  }

  /** The names docs/metrics.md gives, each series there from the start. */
  @Test
  void revocationAndAnonymousMeters_shownFromTheStart() throws Exception {
    String scrape = get("/metrics").body();
    for (String series :
        java.util.List.of(
            "sparkgate_revocations_active{kind=\"principal\"} 0.0",
            "sparkgate_revocations_active{kind=\"token\"} 0.0",
            "sparkgate_revocations_refused_total{kind=\"principal\"} 0.0",
            "sparkgate_revocations_refused_total{kind=\"token\"} 0.0",
            "sparkgate_auth_anonymous_fallback 0.0",
            "sparkgate_auth_anonymous_calls_total 0.0")) {
      assertTrue(scrape.contains("\n" + series + "\n"), series + " in:\n" + scrape);
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
