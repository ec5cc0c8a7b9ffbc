package io.sparkgate.bench;

import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A bounded soak run (issue 49): one proxy in front of the fake backend, under mixed traffic for a set time
 * (small calls, large results, refused calls, cancelled streams, reconnects), with the proxy's heap (after a
 * full collection that {@code jcmd GC.run} asks for), direct memory, threads, file descriptors and RSS sampled
 * at a fixed interval. It writes every
 * sample and the least-squares slope of each series per hour to {@code bench/results/soak-<time>.json}: a
 * leak shows as a slope that stays well above zero; a flat series after warm-up is what a healthy proxy does.
 * Every loop is bounded by the duration, and all traffic stays on the loopback interface.
 */
public final class Soak {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final String TOKEN = "soak-" + UUID.randomUUID();

  private Soak() {}

  public static void main(String[] args) throws Exception {
    Duration duration = Duration.ofHours(1);
    Duration sample = Duration.ofSeconds(10);
    Path jar = Path.of("target", "sparkgate.jar");
    Path out = Path.of("bench", "results");
    int workers = 4;
    long pauseMillis = 5;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--duration" -> duration = Duration.parse("PT" + args[++i].toUpperCase());
        case "--sample" -> sample = Duration.parse("PT" + args[++i].toUpperCase());
        case "--jar" -> jar = Path.of(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        case "--workers" -> workers = Integer.parseInt(args[++i]);
        case "--pause-ms" -> pauseMillis = Long.parseLong(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    Path work = Files.createTempDirectory("sparkgate-soak-");
    try (Endpoints endpoints = new Endpoints(work)) {
      int backendPort = endpoints.startBackend();
      int proxyPort = Endpoints.freePort();
      int adminPort = Endpoints.freePort();
      Path config = work.resolve("sparkgate.yaml");
      Files.writeString(config, config(proxyPort, backendPort, adminPort, work));
      Process proxy =
          endpoints.start(
              "sparkgate",
              List.of(
                  Endpoints.javaBin(),
                  "-Xmx512m",
                  "-XX:+UseParallelGC",
                  "-jar",
                  jar.toString(),
                  "serve",
                  "--config",
                  config.toString()));
      LoadGenerator.Target good =
          new LoadGenerator.Target("sparkgate", "127.0.0.1", proxyPort, null, TOKEN);
      LoadGenerator.Target bad =
          new LoadGenerator.Target("sparkgate", "127.0.0.1", proxyPort, null, "wrong-" + TOKEN);
      Endpoints.waitReady(good, proxy, Duration.ofSeconds(60));
      log("proxy pid " + proxy.pid() + " on " + proxyPort + ", backend on " + backendPort);

      long end = System.nanoTime() + duration.toNanos();
      Counts counts = new Counts();
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < workers; w++) {
        long pause = pauseMillis;
        Thread t = new Thread(() -> traffic(good, bad, end, pause, counts), "soak-worker-" + w);
        t.start();
        threads.add(t);
      }
      List<Map<String, Double>> samples = new ArrayList<>();
      long start = System.nanoTime();
      long next = start;
      while (System.nanoTime() < end) {
        samples.add(sample(proxy.pid(), adminPort, (System.nanoTime() - start) / 1e9));
        log(samples.get(samples.size() - 1) + " " + counts);
        next += sample.toNanos();
        long wait = Math.min(next, end) - System.nanoTime();
        if (wait > 0) {
          TimeUnit.NANOSECONDS.sleep(wait);
        }
      }
      for (Thread t : threads) {
        t.join(TimeUnit.MINUTES.toMillis(2));
      }
      // Once the traffic has stopped: what the proxy holds when idle again (kept out of the
      // slopes).
      Map<String, Double> after = sample(proxy.pid(), adminPort, (System.nanoTime() - start) / 1e9);
      report(out, duration, sample, workers, samples, after, counts);
    }
  }

  private static String config(int port, int backendPort, int adminPort, Path work)
      throws Exception {
    String sha =
        HexFormat.of()
            .formatHex(
                MessageDigest.getInstance("SHA-256")
                    .digest(TOKEN.getBytes(StandardCharsets.UTF_8)));
    return String.join(
        "\n",
        "listen: {address: 127.0.0.1, port: " + port + ", plaintext: true}",
        "backend: {address: '127.0.0.1:" + backendPort + "'}",
        "auth:",
        "  static_tokens:",
        "    - {sha256: " + sha + ", principal: soak}",
        "audit: {file: '"
            + work.resolve("audit").resolve("audit.jsonl")
            + "',"
            + " max_file_size: 16MiB, fsync: batch}",
        "admin: {address: 127.0.0.1, port: " + adminPort + "}",
        "");
  }

  /** What the workers did, by kind. */
  static final class Counts {
    final AtomicLong small = new AtomicLong();
    final AtomicLong large = new AtomicLong();
    final AtomicLong refused = new AtomicLong();
    final AtomicLong cancelled = new AtomicLong();
    final AtomicLong reconnects = new AtomicLong();
    final AtomicLong unexpected = new AtomicLong();

    Map<String, Long> asMap() {
      Map<String, Long> m = new LinkedHashMap<>();
      m.put("small", small.get());
      m.put("large", large.get());
      m.put("refused", refused.get());
      m.put("cancelled", cancelled.get());
      m.put("reconnects", reconnects.get());
      m.put("unexpected", unexpected.get());
      return m;
    }

    @Override
    public String toString() {
      return asMap().toString();
    }
  }

  /**
   * One worker: each step one of small call (60%), 8 MiB result (10%), refused call with a wrong token
   * (10%), a 64 MiB stream cancelled after its first batch (10%), or a new connection for one call (10%).
   */
  private static void traffic(
      LoadGenerator.Target good, LoadGenerator.Target bad, long end, long pause, Counts counts) {
    ManagedChannel channel = LoadGenerator.channel(good);
    ManagedChannel refusedChannel = LoadGenerator.channel(bad);
    String session = UUID.randomUUID().toString();
    byte[] small = BenchProtocol.executePlanRequest(session, 16, 1);
    byte[] large = BenchProtocol.executePlanRequest(session, 1 << 20, 8);
    byte[] huge = BenchProtocol.executePlanRequest(session, 1 << 20, 64);
    try {
      while (System.nanoTime() < end) {
        int pick = ThreadLocalRandom.current().nextInt(100);
        try {
          if (pick < 60) {
            expect(call(channel, small, false), Status.Code.OK, counts.small, counts);
          } else if (pick < 70) {
            expect(call(channel, large, false), Status.Code.OK, counts.large, counts);
          } else if (pick < 80) {
            expect(
                call(refusedChannel, small, false),
                Status.Code.UNAUTHENTICATED,
                counts.refused,
                counts);
          } else if (pick < 90) {
            expect(call(channel, huge, true), Status.Code.CANCELLED, counts.cancelled, counts);
          } else {
            ManagedChannel fresh = LoadGenerator.channel(good);
            try {
              expect(call(fresh, small, false), Status.Code.OK, counts.reconnects, counts);
            } finally {
              fresh.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
          }
          Thread.sleep(pause);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        } catch (RuntimeException e) {
          counts.unexpected.incrementAndGet();
        }
      }
    } finally {
      channel.shutdownNow();
      refusedChannel.shutdownNow();
    }
  }

  private static void expect(Status status, Status.Code code, AtomicLong ok, Counts counts) {
    if (status.getCode() == code) {
      ok.incrementAndGet();
    } else {
      counts.unexpected.incrementAndGet();
      log("unexpected " + status);
    }
  }

  /** One ExecutePlan; with {@code cancel}, cancelled by the client after its first response. */
  private static Status call(ManagedChannel channel, byte[] request, boolean cancel)
      throws InterruptedException {
    CompletableFuture<Status> done = new CompletableFuture<>();
    ClientCall<byte[], Integer>[] holder = new ClientCall[1];
    AtomicLong responses = new AtomicLong();
    holder[0] =
        LoadGenerator.execute(
            channel,
            request,
            n -> {
              if (cancel && responses.incrementAndGet() == 1) {
                holder[0].cancel("soak: the client gives up", null);
              }
            },
            done::complete);
    try {
      return done.get(60, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      holder[0].cancel("soak: no answer in 60 s", null);
      return Status.DEADLINE_EXCEEDED.withDescription("no answer in 60 s");
    }
  }

  private static final Pattern SAMPLE =
      Pattern.compile("^([a-z_]+)(\\{[^}]*\\})? ([0-9.eE+-]+)$", Pattern.MULTILINE);

  /** The proxy's figures now: from its metrics endpoint and from /proc. */
  private static Map<String, Double> sample(long pid, int adminPort, double seconds)
      throws IOException, InterruptedException {
    Map<String, Double> s = new LinkedHashMap<>();
    s.put("t_s", seconds);
    // A full collection first, so that the heap figure is what is live, not where the sawtooth
    // stands.
    Process gc =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(pid),
                "GC.run")
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    if (!gc.waitFor(30, TimeUnit.SECONDS)) {
      gc.destroyForcibly();
    }
    String text =
        HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/metrics"))
                    .build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    double heap = 0;
    Matcher m = SAMPLE.matcher(text);
    while (m.find()) {
      String name = m.group(1);
      String labels = m.group(2) == null ? "" : m.group(2);
      double value = Double.parseDouble(m.group(3));
      switch (name) {
        case "jvm_memory_used_bytes" -> {
          if (labels.contains("area=\"heap\"")) heap += value;
        }
        case "jvm_gc_live_data_size_bytes" -> s.put("heap_live_after_gc_bytes", value);
        case "sparkgate_netty_direct_memory_used_bytes" -> s.put("netty_direct_bytes", value);
        case "jvm_buffer_memory_used_bytes" -> {
          if (labels.contains("id=\"direct\"")) s.put("jvm_direct_buffers_bytes", value);
        }
        case "jvm_threads_live_threads" -> s.put("threads", value);
        case "process_files_open_files" -> s.put("open_fds", value);
        default -> {}
      }
    }
    s.put("heap_after_full_gc_bytes", heap);
    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
      if (line.startsWith("VmRSS:")) {
        s.put("rss_bytes", 1024 * Double.parseDouble(line.replaceAll("[^0-9]", "")));
      }
    }
    try (var fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
      s.put("proc_fds", (double) fds.count());
    }
    return s;
  }

  /** Least-squares slope of y over t (seconds), per hour. */
  static double slopePerHour(List<Double> t, List<Double> y) {
    int n = t.size();
    double mt = t.stream().mapToDouble(Double::doubleValue).average().orElse(0);
    double my = y.stream().mapToDouble(Double::doubleValue).average().orElse(0);
    double num = 0;
    double den = 0;
    for (int i = 0; i < n; i++) {
      num += (t.get(i) - mt) * (y.get(i) - my);
      den += (t.get(i) - mt) * (t.get(i) - mt);
    }
    return den == 0 ? 0 : num / den * 3600;
  }

  private static void report(
      Path out,
      Duration duration,
      Duration sample,
      int workers,
      List<Map<String, Double>> samples,
      Map<String, Double> after,
      Counts counts)
      throws IOException {
    // The first fifth is warm-up (JIT, pools filling): slopes over the rest say whether anything
    // grows.
    List<Map<String, Double>> steady = samples.subList(samples.size() / 5, samples.size());
    Map<String, Object> slopes = new LinkedHashMap<>();
    StringBuilder table = new StringBuilder();
    table.append(
        String.format("%-26s %14s %14s %16s%n", "series", "first", "last", "slope/hour (steady)"));
    for (String key : samples.get(0).keySet()) {
      if (key.equals("t_s")) continue;
      List<Double> t = new ArrayList<>();
      List<Double> y = new ArrayList<>();
      for (Map<String, Double> s : steady) {
        if (s.containsKey(key)) {
          t.add(s.get("t_s"));
          y.add(s.get(key));
        }
      }
      double slope = slopePerHour(t, y);
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("first", samples.get(0).get(key));
      entry.put("steady_first", steady.get(0).get(key));
      entry.put("last", samples.get(samples.size() - 1).get(key));
      entry.put("slope_per_hour", slope);
      slopes.put(key, entry);
      table.append(
          String.format(
              "%-26s %14.0f %14.0f %16.1f%n",
              key, samples.get(0).get(key), samples.get(samples.size() - 1).get(key), slope));
    }
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("time", Instant.now().toString());
    json.put("duration_s", duration.toSeconds());
    json.put("sample_s", sample.toSeconds());
    json.put("workers", workers);
    json.put("calls", counts.asMap());
    json.put("slopes", slopes);
    json.put("samples", samples);
    json.put("after_traffic", after);
    Files.createDirectories(out);
    Path file =
        out.resolve(
            "soak-" + Instant.now().toString().replace(":", "").replaceAll("\\..*", "") + ".json");
    Files.writeString(
        file,
        new com.fasterxml.jackson.databind.ObjectMapper()
            .writerWithDefaultPrettyPrinter()
            .writeValueAsString(json));
    System.out.print(table);
    System.out.println("after the traffic stopped: " + after);
    System.out.println("calls " + counts + "\nwritten " + file);
  }

  private static void log(String message) {
    System.err.println("[soak " + Instant.now() + "] " + message);
  }
}
