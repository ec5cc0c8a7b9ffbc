package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgate.Sparkgate;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.DebianPackages;
import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A real Prometheus (Debian's package) scrapes Sparkgate in front of a real Spark 4.0 server while the real
 * JVM client runs a query and has one refused: the exposition parses in Prometheus's own scraper, and what
 * its query API returns is what the client did. Needs the {@code prometheus} binary ({@code .ci/setup}
 * installs it); without it the test is skipped, unless {@code SPARKGATE_CI=1} (set by {@code .ci/run}), which
 * makes it a failure.
 */
@ExtendWith(SparkServerExtension.class)
class PrometheusIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static Sparkgate proxy;
  private static SparkSession spark;
  private static Process prometheus;
  private static Path log;
  private static int prometheusPort;

  @BeforeAll
  static void start(SparkConnectServerProcess server) throws Exception {
    String binary =
        DebianPackages.require(
            "prometheus",
            "the server that scrapes the metrics endpoint",
            () ->
                DebianPackages.firstWorking(
                    List.of("/usr/bin/prometheus", "prometheus"), "--version"));
    Path dir = ProxyConfigs.freshDir("prometheus");
    proxy =
        Sparkgate.start(
            ProxyConfigs.write(
                dir,
                ProxyConfigs.PLAINTEXT_LISTENER,
                ProxyConfigs.backend(server.port()),
                ProxyConfigs.policy("shared-server.yaml"),
                "metrics: {address: 127.0.0.1, port: 0}"));
    Files.writeString(
        dir.resolve("prometheus.yml"),
        String.join(
            "\n",
            "global: {scrape_interval: 1s, scrape_timeout: 1s}",
            "scrape_configs:",
            "  - job_name: sparkgate",
            "    static_configs: [{targets: ['127.0.0.1:" + proxy.metricsPort() + "']}]",
            ""));
    try (ServerSocket free = new ServerSocket(0)) {
      prometheusPort = free.getLocalPort();
    }
    log = dir.resolve("prometheus.log");
    prometheus =
        new ProcessBuilder(
                binary,
                "--config.file=" + dir.resolve("prometheus.yml"),
                "--storage.tsdb.path=" + dir.resolve("tsdb"),
                "--web.listen-address=127.0.0.1:" + prometheusPort)
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    spark = SparkClients.connect("sc://127.0.0.1:" + proxy.port());
  }

  @AfterAll
  static void stop() throws Exception {
    if (prometheus != null) {
      prometheus.destroy();
      if (!prometheus.waitFor(20, TimeUnit.SECONDS)) {
        prometheus.destroyForcibly();
      }
    }
    ProxyConfigs.closeAll(spark, proxy);
  }

  @Test
  void prometheusScrapesWhatTheClientDid() throws Exception {
    assertEquals(7, spark.range(7).collectAsList().size());
    assertThrows(
        Exception.class,
        () -> spark.sql("SELECT reflect('java.lang.System','getenv')").collectAsList());

    assertEquals(
        1.0, await("up{job=\"sparkgate\"}", 1.0), "Prometheus scraped the endpoint and parsed it");
    assertTrue(await("sparkgate_calls_total{method=\"ExecutePlan\",code=\"OK\"}", 1.0) >= 1.0);
    assertEquals(
        1.0,
        await("sparkgate_calls_total{method=\"ExecutePlan\",code=\"PERMISSION_DENIED\"}", 1.0));
    assertEquals(
        1.0,
        await("sparkgate_policy_decisions_total{outcome=\"deny\",rule=\"no-reflection\"}", 1.0));
    assertEquals(1.0, await("sparkgate_backend_profile_known", 1.0));
    assertTrue(
        await("sparkgate_call_duration_seconds_count{method=\"ExecutePlan\"}", 2.0) >= 2.0,
        "the histogram's count: the answered and the refused call");
  }

  /** Queries until the instant value is at least {@code atLeast} (Prometheus scrapes every second). */
  private static double await(String query, double atLeast) throws Exception {
    return Await.value(
        query + " to reach at least " + atLeast,
        Duration.ofSeconds(60),
        () -> {
          if (!prometheus.isAlive()) {
            throw new AssertionError("prometheus exited: " + logText());
          }
          return query(query);
        },
        value -> value >= atLeast,
        () -> "log: " + logText());
  }

  private static String logText() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "<could not read " + log + ": " + e + ">";
    }
  }

  /** The query's single value, or NaN while it has none (or Prometheus is not up yet). */
  private static double query(String query) throws Exception {
    URI uri =
        URI.create(
            "http://127.0.0.1:"
                + prometheusPort
                + "/api/v1/query?query="
                + URLEncoder.encode(query, StandardCharsets.UTF_8));
    HttpResponse<String> response;
    try {
      response =
          HTTP.send(
              HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofString());
    } catch (ConnectException e) {
      return Double.NaN;
    }
    JsonNode result = JSON.readTree(response.body()).path("data").path("result");
    if (response.statusCode() != 200 || result.size() != 1) {
      return Double.NaN;
    }
    return Double.parseDouble(result.get(0).path("value").get(1).asText());
  }
}
