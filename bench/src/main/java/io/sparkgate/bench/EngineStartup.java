package io.sparkgate.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.sparkgate.Sparkgate;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.UserContext;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Engines on demand (issue 60): a new principal's time to first result (a {@code SELECT 1} in a new session,
 * from the call to its last response) on a Spark Connect server that already runs, on a warm engine handed
 * out at the first call, and on a cold one started by it; and the heap an in-process Sparkgate spends on
 * placed engines. Real Spark servers from {@code --spark-home} (the pyspark wheel's distribution); run by
 * {@code bench/engines.sh}.
 */
final class EngineStartup {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private EngineStartup() {}

  public static void main(String[] args) throws Exception {
    Path sparkHome = null;
    int rounds = 3;
    Path out = Path.of("bench/results");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--spark-home" -> sparkHome = Path.of(args[++i]);
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (sparkHome == null) throw new IllegalArgumentException("--spark-home is required");
    Path dir = Files.createTempDirectory("sparkgate-engine-bench");
    String serverToken = UUID.randomUUID().toString();
    int serverPort = freePort();
    Process server = startServer(sparkHome, serverPort, serverToken, dir.resolve("running.log"));
    Map<String, Object> result = new LinkedHashMap<>();
    try {
      awaitPort(serverPort, 180);
      Path config = config(dir, sparkHome, serverPort, serverToken, rounds);
      try (Sparkgate proxy = Sparkgate.start(ProxyConfig.load(config))) {
        awaitEngines(proxy, "warm", 1, 180);
        // One query of a principal nobody measures, so no figure pays for the proxy's own warm-up.
        firstResult(proxy, "t-run-x");
        List<Map<String, Object>> each = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
          // Each figure on a quiet machine: the warm engine handed out in the last round has been
          // replaced, and the cold engine starts before the warm one is handed out (whose
          // replacement
          // then starts).
          awaitEngines(proxy, "warm", 1, 180);
          Map<String, Object> round = new LinkedHashMap<>();
          round.put("running_server_ms", firstResult(proxy, "t-run-" + r));
          round.put("cold_engine_ms", firstResult(proxy, "t-cold-" + r));
          round.put("warm_engine_ms", firstResult(proxy, "t-warm-" + r));
          // The proxy's heap with this round's two engines placed, and once they are stopped: what
          // a
          // placed engine costs it (its record, token, channels, health entry), paired within the
          // round.
          awaitEngines(proxy, "warm", 1, 180);
          int placed = placedEngines(proxy);
          if (r == rounds - 1) result.put("engine_rss_bytes", engineRss(proxy));
          long heapPlaced = heapAfterGc();
          each.add(round);
          stopKeyed(proxy);
          round.put("proxy_heap_per_placed_engine_bytes", (heapPlaced - heapAfterGc()) / placed);
          System.err.println("[engines] round " + (r + 1) + ": " + round);
        }
        result.put("rounds", each);
        for (String k :
            List.of(
                "running_server_ms",
                "warm_engine_ms",
                "cold_engine_ms",
                "proxy_heap_per_placed_engine_bytes")) {
          result.put(k + "_median", median(each.stream().map(m -> (Long) m.get(k)).toList()));
        }
      }
    } finally {
      server.destroy();
      server.waitFor(20, TimeUnit.SECONDS);
      server.destroyForcibly();
    }
    Files.createDirectories(out);
    Path file =
        out.resolve(
            "engines-"
                + Instant.now().toString().replaceAll("[^0-9T]", "").substring(0, 15)
                + ".json");
    Files.writeString(file, JSON.writeValueAsString(result));
    System.out.println(JSON.writeValueAsString(result));
    System.err.println("[engines] written to " + file);
  }

  /** Three pools: a running server, engines with one kept warm, engines started cold. */
  private static Path config(Path dir, Path sparkHome, int serverPort, String token, int rounds)
      throws Exception {
    Files.writeString(dir.resolve("server.token"), token);
    StringBuilder tokens = new StringBuilder();
    for (String pool : List.of("run", "warm", "cold")) {
      for (int r = -1; r < rounds; r++) {
        String t = "t-" + pool + "-" + (r < 0 ? "x" : Integer.toString(r));
        tokens.append(
            "    - {sha256: "
                + sha256(t)
                + ", principal: "
                + t.substring(2)
                + ", groups: ["
                + pool
                + "]}\n");
      }
    }
    String engines =
        "{share: user, spark_home: '"
            + sparkHome
            + "', master: 'local[1]', conf: {spark.driver.memory: 512m, spark.sql.warehouse.dir: '"
            + dir.resolve("warehouse")
            + "'}, max: 4, idle_timeout: 1h, log_dir: '"
            + dir
            + "'";
    String yaml =
        "listen: {address: 127.0.0.1, port: 0, plaintext: true}\n"
            + "auth:\n  static_tokens:\n"
            + tokens
            + "pools:\n"
            + "  running:\n    backends: [{address: '127.0.0.1:"
            + serverPort
            + "', token_file: server.token}]\n"
            + "  warm:\n    engines: "
            + engines
            + ", warm: 1}\n"
            + "  cold:\n    engines: "
            + engines
            + "}\n"
            + "routes:\n"
            + "  - {match: {groups: [run]}, pool: running}\n"
            + "  - {match: {groups: [warm]}, pool: warm}\n"
            + "  - {match: {groups: [cold]}, pool: cold}\n"
            + "admin: {address: 127.0.0.1, port: 0}\n";
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(file, yaml);
    return file;
  }

  /** Milliseconds from a new session's {@code SELECT 1} to its last response, as the token's principal. */
  private static long firstResult(Sparkgate proxy, String token) {
    ManagedChannel ch =
        NettyChannelBuilder.forAddress("127.0.0.1", proxy.port())
            .usePlaintext()
            .intercept(bearer(token))
            .build();
    try {
      ExecutePlanRequest request =
          ExecutePlanRequest.newBuilder()
              .setSessionId(UUID.randomUUID().toString())
              .setUserContext(UserContext.newBuilder().setUserId(token.substring(2)))
              .setPlan(
                  Plan.newBuilder()
                      .setRoot(Relation.newBuilder().setSql(SQL.newBuilder().setQuery("SELECT 1"))))
              .build();
      long start = System.nanoTime();
      Iterator<byte[]> responses =
          ClientCalls.blockingServerStreamingCall(
              ch,
              SecurityFixtures.EXECUTE_PLAN,
              CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.MINUTES),
              request.toByteArray());
      while (responses.hasNext()) responses.next();
      return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    } finally {
      ch.shutdownNow();
    }
  }

  private static JsonNode engines(Sparkgate proxy) throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + proxy.adminPort() + "/api/engines"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    return JSON.readTree(r.body()).get("engines");
  }

  private static void awaitEngines(Sparkgate proxy, String state, int count, int seconds)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < deadline) {
      int n = 0;
      for (JsonNode e : engines(proxy)) if (e.get("state").asText().equals(state)) n++;
      if (n >= count) return;
      Thread.sleep(200);
    }
    throw new IllegalStateException(
        "no " + count + " " + state + " engines after " + seconds + " s");
  }

  private static int placedEngines(Sparkgate proxy) throws Exception {
    int n = 0;
    for (JsonNode e : engines(proxy)) if (!e.get("key").asText().isEmpty()) n++;
    return n;
  }

  /** Stops every engine handed to a principal, and waits until they are gone. */
  private static void stopKeyed(Sparkgate proxy) throws Exception {
    for (JsonNode e : engines(proxy)) {
      String key = e.get("key").asText();
      if (key.isEmpty()) continue;
      HTTP.send(
          HttpRequest.newBuilder(
                  URI.create(
                      "http://127.0.0.1:"
                          + proxy.adminPort()
                          + "/api/engines/"
                          + e.get("pool").asText()
                          + "/"
                          + java.net.URLEncoder.encode(key, StandardCharsets.UTF_8)
                          + "/stop"))
              .header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString("{}"))
              .build(),
          HttpResponse.BodyHandlers.ofString());
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (placedEngines(proxy) > 0 && System.nanoTime() < deadline) Thread.sleep(200);
    Thread.sleep(3000); // their processes end (SIGTERM) after their records go
  }

  /** The resident memory of one running engine process (the first listed), in bytes. */
  private static long engineRss(Sparkgate proxy) throws Exception {
    for (JsonNode e : engines(proxy)) {
      int port = Integer.parseInt(e.get("address").asText().replaceAll(".*:", ""));
      for (ProcessHandle p : ProcessHandle.current().descendants().toList()) {
        String cmd = p.info().commandLine().orElse("");
        if (cmd.contains("spark.connect.grpc.binding.port=" + port)) {
          for (String line : Files.readAllLines(Path.of("/proc/" + p.pid() + "/status"))) {
            if (line.startsWith("VmRSS:")) {
              return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
          }
        }
      }
    }
    return -1;
  }

  private static long heapAfterGc() throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(200);
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  private static long median(List<Long> values) {
    List<Long> sorted = new ArrayList<>(values);
    sorted.sort(Long::compare);
    return sorted.get(sorted.size() / 2);
  }

  private static Process startServer(Path sparkHome, int port, String token, Path log)
      throws IOException {
    ProcessBuilder b =
        new ProcessBuilder(
            sparkHome.resolve("bin/spark-submit").toString(),
            "--class",
            "org.apache.spark.sql.connect.service.SparkConnectServer",
            "--master",
            "local[1]",
            "--conf",
            "spark.driver.memory=512m",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf",
            "spark.connect.grpc.binding.port=" + port,
            "spark-internal");
    b.environment().keySet().removeIf(k -> k.startsWith("PYSPARK_") || k.startsWith("SPARK_"));
    b.environment().put("SPARK_HOME", sparkHome.toString());
    b.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    b.environment().put("SPARK_CONNECT_AUTHENTICATE_TOKEN", token);
    b.directory(log.getParent().toFile());
    b.redirectErrorStream(true);
    b.redirectOutput(log.toFile());
    return b.start();
  }

  private static void awaitPort(int port, int seconds) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < deadline) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (IOException e) {
        Thread.sleep(200);
      }
    }
    throw new IllegalStateException("the running server did not listen in " + seconds + " s");
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static String sha256(String token) throws Exception {
    return HexFormat.of()
        .formatHex(
            MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
  }

  private static io.grpc.ClientInterceptor bearer(String token) {
    Metadata bearer = new Metadata();
    bearer.put(SecurityFixtures.AUTHORIZATION, "Bearer " + token);
    return MetadataUtils.newAttachHeadersInterceptor(bearer);
  }
}
