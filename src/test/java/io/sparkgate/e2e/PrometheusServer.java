package io.sparkgate.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real Prometheus (Debian's package) scraping one Sparkgate metrics endpoint every second, with the given
 * rule files evaluated every second, and its HTTP API. Skipped without the binary, a failure under
 * {@code SPARKGATE_CI=1}.
 */
final class PrometheusServer implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private final Process process;
  private final Path log;
  private final int port;

  private PrometheusServer(Process process, Path log, int port) {
    this.process = process;
    this.log = log;
    this.port = port;
  }

  /** The {@code prometheus} binary, or the test is skipped (failed under CI). */
  static String binary() {
    return DebianPackages.require(
        "prometheus",
        "the server that scrapes the metrics endpoint",
        () ->
            DebianPackages.firstWorking(List.of("/usr/bin/prometheus", "prometheus"), "--version"));
  }

  /** Starts Prometheus in {@code dir}, scraping {@code 127.0.0.1:metricsPort} as job {@code sparkgate}. */
  static PrometheusServer start(String binary, Path dir, int metricsPort, List<Path> ruleFiles)
      throws IOException {
    StringBuilder config =
        new StringBuilder(
            "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n");
    if (!ruleFiles.isEmpty()) {
      config.append("rule_files:\n");
      for (Path f : ruleFiles) {
        config.append("  - '").append(f.toAbsolutePath()).append("'\n");
      }
    }
    config
        .append("scrape_configs:\n")
        .append("  - job_name: sparkgate\n")
        .append("    static_configs: [{targets: ['127.0.0.1:")
        .append(metricsPort)
        .append("']}]\n");
    Path file = Files.writeString(dir.resolve("prometheus.yml"), config);
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    Path log = dir.resolve("prometheus.log");
    Process process =
        new ProcessBuilder(
                binary,
                "--config.file=" + file,
                "--storage.tsdb.path=" + dir.resolve("tsdb"),
                "--web.listen-address=127.0.0.1:" + port)
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    return new PrometheusServer(process, log, port);
  }

  /** {@code /api/v1/query}'s whole answer (errors included), or null while Prometheus is not listening. */
  JsonNode query(String promql) throws IOException, InterruptedException {
    return get("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
  }

  /** The single value of an instant query, or NaN while it has none. */
  double value(String promql) throws IOException, InterruptedException {
    JsonNode answer = query(promql);
    JsonNode result = answer == null ? null : answer.path("data").path("result");
    if (result == null || !"success".equals(answer.path("status").asText()) || result.size() != 1) {
      return Double.NaN;
    }
    return Double.parseDouble(result.get(0).path("value").get(1).asText());
  }

  /**
   * An API path's JSON answer, or null while Prometheus is not listening, or listening but not ready yet (it
   * answers a plain-text "Service Unavailable" until its storage is open).
   */
  JsonNode get(String pathAndQuery) throws IOException, InterruptedException {
    if (!process.isAlive()) {
      throw new AssertionError("prometheus exited: " + logText());
    }
    HttpResponse<String> response;
    try {
      response =
          HTTP.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery))
                  .GET()
                  .build(),
              HttpResponse.BodyHandlers.ofString());
    } catch (ConnectException e) {
      return null;
    }
    if (response.statusCode() == 503) {
      return null;
    }
    return JSON.readTree(response.body());
  }

  String logText() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "<could not read " + log + ": " + e + ">";
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(20, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }
}
