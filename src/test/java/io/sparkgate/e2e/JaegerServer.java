package io.sparkgate.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgate.testing.GoTools;
import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A real Jaeger (all-in-one v2, on the OpenTelemetry Collector, built from its Go module) with in-memory
 * storage: OTLP gRPC and HTTP receivers and the query API, each on a free loopback port, and nothing else
 * listening (no metrics, health or sampling ports that could clash with another test).
 */
final class JaegerServer implements AutoCloseable {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private final Process process;
  private final Path log;
  final int otlpGrpcPort;
  final int otlpHttpPort;
  final int queryPort;

  private JaegerServer(Process process, Path log, int grpc, int http, int query) {
    this.process = process;
    this.log = log;
    this.otlpGrpcPort = grpc;
    this.otlpHttpPort = http;
    this.queryPort = query;
  }

  /** The binary, built once into target/tools/bin (minutes on a machine without Go's caches). */
  static Path binary() throws IOException {
    return GoTools.install("jaeger");
  }

  static JaegerServer start(Path binary, Path dir) throws IOException {
    int grpc = freePort();
    int http = freePort();
    int query = freePort();
    int queryGrpc = freePort();
    String config =
        String.join(
            "\n",
            "service:",
            "  extensions: [jaeger_storage, jaeger_query]",
            "  pipelines:",
            "    traces:",
            "      receivers: [otlp]",
            "      processors: [batch]",
            "      exporters: [jaeger_storage_exporter]",
            "  telemetry:",
            "    metrics: {level: none}",
            "    logs: {level: info}",
            "extensions:",
            "  jaeger_storage:",
            "    backends:",
            "      memstore: {memory: {max_traces: 10000}}",
            "  jaeger_query:",
            "    storage: {traces: memstore}",
            "    http: {endpoint: '127.0.0.1:" + query + "'}",
            "    grpc: {endpoint: '127.0.0.1:" + queryGrpc + "'}",
            "receivers:",
            "  otlp:",
            "    protocols:",
            "      grpc: {endpoint: '127.0.0.1:" + grpc + "'}",
            "      http: {endpoint: '127.0.0.1:" + http + "'}",
            "processors:",
            "  batch: {timeout: 100ms}",
            "exporters:",
            "  jaeger_storage_exporter: {trace_storage: memstore}",
            "");
    Path file = Files.writeString(dir.resolve("jaeger.yaml"), config);
    Path log = dir.resolve("jaeger.log");
    Process process =
        new ProcessBuilder(binary.toString(), "--config", file.toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    return new JaegerServer(process, log, grpc, http, query);
  }

  private static int freePort() throws IOException {
    try (ServerSocket free = new ServerSocket(0)) {
      return free.getLocalPort();
    }
  }

  /** Whether the query API answers. */
  boolean ready() throws IOException, InterruptedException {
    return get("/api/services") != null;
  }

  /** {@code /api/traces?service=...}'s traces ({@code data}), or an empty array while it has none. */
  JsonNode traces(String service) throws IOException, InterruptedException {
    JsonNode answer = get("/api/traces?limit=100&lookback=1h&service=" + service);
    return answer == null ? JSON.createArrayNode() : answer.path("data");
  }

  /** One trace by id, or null while Jaeger does not have it. */
  JsonNode trace(String traceId) throws IOException, InterruptedException {
    JsonNode answer = get("/api/traces/" + traceId);
    if (answer == null || answer.path("data").size() == 0) return null;
    return answer.path("data").get(0);
  }

  /** A query API path's JSON, or null while Jaeger is not listening or has no such thing (404). */
  private JsonNode get(String pathAndQuery) throws IOException, InterruptedException {
    if (!process.isAlive()) throw new AssertionError("jaeger exited: " + logText());
    HttpResponse<String> response;
    try {
      response =
          HTTP.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queryPort + pathAndQuery))
                  .GET()
                  .build(),
              HttpResponse.BodyHandlers.ofString());
    } catch (ConnectException e) {
      return null;
    }
    if (response.statusCode() != 200) return null;
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
    if (!process.waitFor(20, TimeUnit.SECONDS)) process.destroyForcibly();
  }
}
