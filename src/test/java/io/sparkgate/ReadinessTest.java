package io.sparkgate;

import static io.sparkgate.testing.WireBytes.concat;
import static io.sparkgate.testing.WireBytes.field;
import static io.sparkgate.testing.WireBytes.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.FakeSparkConnect;
import io.sparkgate.testing.MetricsScrape;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Readiness as a load balancer sees it, on {@code /readyz} and on the gRPC health service of the proxy port:
 * ready with a backend up in every pool, not ready (saying which pool) when a pool has none, ready again when
 * it comes back; and a draining proxy is not ready at once while it still serves calls for the drain delay.
 */
final class ReadinessTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();

  @TempDir Path dir;

  @Test
  void readyOnlyWithABackendUpInEveryPool_andNotWhileDraining() throws Exception {
    FakeSparkConnect fake = new FakeSparkConnect();
    Server a = NettyServerBuilder.forPort(0).fallbackHandlerRegistry(fake).build().start();
    Server b = NettyServerBuilder.forPort(0).fallbackHandlerRegistry(fake).build().start();
    int bPort = b.getPort();
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(
        file,
        String.join(
            "\n",
            "listen: {plaintext: true, address: 127.0.0.1, port: 0, drain_delay: 3s}",
            "pools:",
            "  analytics: {backends: ['127.0.0.1:" + a.getPort() + "']}",
            "  lakehouse: {backends: ['127.0.0.1:" + bPort + "']}",
            "routes: [{pool: analytics}]",
            "health: {interval: 200ms, timeout: 200ms}",
            "admin: {port: 0}",
            "auth: {anonymous: true}",
            ""));
    Sparkgate proxy = Sparkgate.start(ProxyConfig.load(file));
    ManagedChannel channel = Channels.plaintext(proxy.port()).build();
    try {
      JsonNode ready = awaitReady(proxy, true);
      assertTrue(ready.path("ready").asBoolean());
      // The health service follows readiness within a second (Sparkgate.watchReadiness), not at
      // once.
      Await.until(
          "the health service to say SERVING",
          java.time.Duration.ofSeconds(10),
          () -> grpcHealth(channel) == ServingStatus.SERVING);

      b.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      JsonNode notReady = awaitReady(proxy, false);
      String failing = failing(notReady);
      assertTrue(failing.contains("backends") && failing.contains("lakehouse"), failing);
      assertFalse(failing.contains("analytics"), failing);
      Await.until(
          "the health service to follow",
          java.time.Duration.ofSeconds(10),
          () -> grpcHealth(channel) == ServingStatus.NOT_SERVING);

      b = NettyServerBuilder.forPort(bPort).fallbackHandlerRegistry(fake).build().start();
      awaitReady(proxy, true);

      // Draining: not ready at once, calls still served until the delay is over, then refused.
      CompletableFuture<Void> stopping = CompletableFuture.runAsync(proxy::drainAndClose);
      JsonNode draining = awaitReady(proxy, false);
      assertTrue(failing(draining).contains("listening: draining"), failing(draining));
      assertEquals(ServingStatus.NOT_SERVING, grpcHealth(channel));
      ClientCalls.blockingUnaryCall(
          channel,
          TestMethods.get("Config"),
          CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS),
          concat(
              field(1, utf8("5f0c1b9e-0000-4000-8000-000000000001")),
              field(2, field(1, utf8("dana")))));
      assertFalse(stopping.isDone(), "still in the drain delay");
      stopping.get(30, TimeUnit.SECONDS);
    } finally {
      channel.shutdownNow();
      proxy.close();
      a.shutdownNow();
      b.shutdownNow();
    }
  }

  @Test
  void anonymousFallback_isShownByReadiness_metrics_andTheAdminApi() throws Exception {
    FakeSparkConnect fake = new FakeSparkConnect();
    Server backend = NettyServerBuilder.forPort(0).fallbackHandlerRegistry(fake).build().start();
    Path file = dir.resolve("fallback.yaml");
    Files.writeString(
        file,
        String.join(
            "\n",
            "listen: {plaintext: true, address: 127.0.0.1, port: 0}",
            "backend: {address: '127.0.0.1:" + backend.getPort() + "'}",
            "admin: {port: 0}",
            "auth:",
            "  static_tokens: [{sha256: '" + "b".repeat(64) + "', principal: x}]",
            "  anonymous: fallback",
            ""));
    Sparkgate proxy = Sparkgate.start(ProxyConfig.load(file));
    ManagedChannel channel = Channels.plaintext(proxy.port()).build();
    try {
      JsonNode ready = awaitReady(proxy, true);
      JsonNode note = null;
      for (JsonNode c : ready.path("checks")) {
        if (c.path("name").asText().equals("anonymous")) note = c;
      }
      assertTrue(note != null && note.path("ok").asBoolean(), ready.toString());
      assertEquals(Sparkgate.ANONYMOUS_FALLBACK, note.path("detail").asText());

      // A call with no credentials is let in, and counted.
      ClientCalls.blockingUnaryCall(
          channel,
          TestMethods.get("Config"),
          CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS),
          concat(
              field(1, utf8("5f0c1b9e-0000-4000-8000-000000000002")),
              field(2, field(1, utf8("someone")))));
      Map<String, Double> metrics = MetricsScrape.get(proxy.adminPort());
      assertEquals(1.0, metrics.get("sparkgate_auth_anonymous_fallback"), metrics.toString());
      assertEquals(1.0, metrics.get("sparkgate_auth_anonymous_calls_total"), metrics.toString());

      HttpResponse<String> access =
          http.send(
              HttpRequest.newBuilder(
                      URI.create("http://127.0.0.1:" + proxy.adminPort() + "/api/revocations"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals("fallback", JSON.readTree(access.body()).path("anonymous").asText());
    } finally {
      channel.shutdownNow();
      proxy.close();
      backend.shutdownNow();
    }
  }

  private static String failing(JsonNode report) {
    StringBuilder s = new StringBuilder();
    for (JsonNode c : report.path("checks")) {
      if (!c.path("ok").asBoolean()) {
        s.append(c.path("name").asText())
            .append(": ")
            .append(c.path("detail").asText())
            .append("; ");
      }
    }
    return s.toString();
  }

  private JsonNode awaitReady(Sparkgate proxy, boolean ready) throws Exception {
    return Await.value(
        "readyz to say ready=" + ready,
        () -> {
          HttpResponse<String> r =
              http.send(
                  HttpRequest.newBuilder(
                          URI.create("http://127.0.0.1:" + proxy.adminPort() + "/readyz"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
          JsonNode body = JSON.readTree(r.body());
          assertEquals(body.path("ready").asBoolean() ? 200 : 503, r.statusCode(), r.body());
          return body;
        },
        body -> body.path("ready").asBoolean() == ready);
  }

  private static ServingStatus grpcHealth(ManagedChannel channel) {
    return HealthGrpc.newBlockingStub(channel)
        .withDeadlineAfter(5, TimeUnit.SECONDS)
        .check(HealthCheckRequest.getDefaultInstance())
        .getStatus();
  }
}
