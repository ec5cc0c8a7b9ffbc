package io.sparkgate.bench;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.lettuce.core.ScriptOutputType;
import io.sparkgate.Sparkgate;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.config.SessionsConfig;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.redis.Redis;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;

/**
 * What routing with a shared Redis costs besides latency (issue 46): one Redis round trip from this JVM, as
 * the proxy makes it ({@link Redis#call}, a GET of a placement key and the Lua EVAL a shared quota would
 * run), and the heap one replica spends on placed sessions, measured on an in-process Sparkgate.
 */
final class RoutingCost {
  private RoutingCost() {}

  /** A quota-like script: count the operation, start the window's expiry on the first one. */
  static final String QUOTA_SCRIPT =
      "local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1])"
          + " end return n";

  static Redis connect(String redisUrl) {
    return Redis.connect(
        new SessionsConfig(
            SessionsConfig.Store.REDIS,
            Optional.of(URI.create(redisUrl)),
            Optional.empty(),
            Duration.ofMillis(500),
            Duration.ofHours(1)));
  }

  /**
   * p50/p99/p99.9 (us) of one Redis command through {@link Redis#call}, one at a time from one thread: a GET of
   * a session placement key and an EVAL of {@link #QUOTA_SCRIPT}.
   */
  static Map<String, Object> redisRoundTrip(String redisUrl, int warmup, int calls) {
    Map<String, Object> out = new LinkedHashMap<>();
    try (Redis redis = connect(redisUrl)) {
      String key = "sparkgate:session:5:bench:" + UUID.randomUUID();
      redis.call(c -> c.set(key, "bench-placement"));
      String quotaKey = "sparkgate:bench:quota:" + UUID.randomUUID();
      String[] keys = {quotaKey};
      out.put(
          "get",
          measure(
              warmup,
              calls,
              () -> {
                redis.call(c -> c.get(key));
              }));
      out.put(
          "eval_quota",
          measure(
              warmup,
              calls,
              () -> {
                redis.call(c -> c.eval(QUOTA_SCRIPT, ScriptOutputType.INTEGER, keys, "60000"));
              }));
      redis.call(c -> c.del(key, quotaKey));
    }
    return out;
  }

  private static Map<String, Object> measure(int warmup, int calls, Runnable command) {
    for (int i = 0; i < warmup; i++) {
      command.run();
    }
    Histogram h = LoadGenerator.newHistogram();
    for (int i = 0; i < calls; i++) {
      long start = System.nanoTime();
      command.run();
      h.recordValue(System.nanoTime() - start);
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("calls", calls);
    m.put("p50_us", h.getValueAtPercentile(50) / 1000.0);
    m.put("p99_us", h.getValueAtPercentile(99) / 1000.0);
    m.put("p999_us", h.getValueAtPercentile(99.9) / 1000.0);
    m.put("mean_us", h.getMean() / 1000.0);
    return m;
  }

  private static final MethodDescriptor<byte[], byte[]> CONFIG =
      MethodDescriptor.newBuilder(
              BenchProtocol.RawMarshaller.INSTANCE, BenchProtocol.RawMarshaller.INSTANCE)
          .setFullMethodName(
              MethodDescriptor.generateFullMethodName(BenchProtocol.SERVICE, "Config"))
          .setType(MethodDescriptor.MethodType.UNARY)
          .build();

  /**
   * The heap one replica holds for {@code sessions} placed sessions: an in-process Sparkgate routing to a pool
   * of two fake backends, with the memory store or with Redis ({@code redisUrl} not null), gets one unary
   * Config call per new session id; heap used after full collections, before and after.
   */
  static Map<String, Object> placementFootprint(
      Path dir, String redisUrl, int sessions, Consumer<String> log) throws Exception {
    Files.createDirectories(dir);
    BenchBackend a = BenchBackend.start(0);
    BenchBackend b = BenchBackend.start(0);
    Sparkgate proxy = null;
    ManagedChannel ch = null;
    Redis redis = redisUrl == null ? null : connect(redisUrl);
    try {
      StringBuilder y = new StringBuilder();
      y.append("# Written by the benchmark runner (RoutingCost): placement footprint.\n");
      y.append("listen:\n  address: 127.0.0.1\n  port: 0\n  plaintext: true\n");
      y.append("auth: {anonymous: true}\n");
      y.append("pools:\n  bench:\n    backends: [127.0.0.1:")
          .append(a.port())
          .append(", 127.0.0.1:")
          .append(b.port())
          .append("]\n");
      y.append("sessions:\n  store: ").append(redisUrl == null ? "memory" : "redis").append('\n');
      if (redisUrl != null) {
        y.append("  redis_url: ").append(redisUrl).append('\n');
      }
      Path file = dir.resolve(redisUrl == null ? "memory.yaml" : "redis.yaml");
      Files.writeString(file, y.toString());
      proxy = Sparkgate.start(ProxyConfig.load(file));
      ch =
          LoadGenerator.channel(
              new LoadGenerator.Target("footprint", "127.0.0.1", proxy.port(), null, null));
      // Warm-up: code paths, connections, caches' own structures; these sessions stay in "before".
      long warmErrors = place(ch, 2_000);
      long redisBefore = redis == null ? 0 : redisUsedMemory(redis);
      long before = heapAfterGc();
      long start = System.nanoTime();
      long errors = place(ch, sessions);
      double seconds = (System.nanoTime() - start) / 1e9;
      long after = heapAfterGc();
      long redisAfter = redis == null ? 0 : redisUsedMemory(redis);
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("store", redisUrl == null ? "memory" : "redis");
      m.put("sessions", sessions);
      m.put("errors", errors + warmErrors);
      m.put("seconds", seconds);
      m.put("calls_per_second", sessions / seconds);
      m.put("heap_before_bytes", before);
      m.put("heap_after_bytes", after);
      m.put("heap_mb_per_100k", (after - before) / 1e6 * 100_000 / sessions);
      m.put("heap_bytes_per_session", (double) (after - before) / sessions);
      if (redis != null) {
        m.put(
            "redis_used_memory_mb_per_100k", (redisAfter - redisBefore) / 1e6 * 100_000 / sessions);
      }
      log.accept(
          String.format(
              "placement footprint (%s): %d sessions in %.1f s, %d errors; heap %.1f -> %.1f MB: %.1f MB per"
                  + " 100k (%.0f bytes per session)%s",
              m.get("store"),
              sessions,
              seconds,
              errors + warmErrors,
              before / 1e6,
              after / 1e6,
              m.get("heap_mb_per_100k"),
              m.get("heap_bytes_per_session"),
              redis == null
                  ? ""
                  : String.format(
                      "; Redis used_memory +%.1f MB per 100k",
                      m.get("redis_used_memory_mb_per_100k"))));
      return m;
    } finally {
      if (ch != null) {
        ch.shutdownNow();
      }
      if (proxy != null) {
        proxy.close();
      }
      if (redis != null) {
        redis.close();
      }
      a.close();
      b.close();
    }
  }

  /** {@code n} Config calls, each with a new session id, from four threads; the calls that failed. */
  private static long place(ManagedChannel ch, int n) throws InterruptedException {
    AtomicLong next = new AtomicLong();
    AtomicLong errors = new AtomicLong();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      Thread th =
          new Thread(
              () -> {
                while (next.getAndIncrement() < n) {
                  byte[] request =
                      ConfigRequest.newBuilder()
                          .setSessionId(UUID.randomUUID().toString())
                          .setUserContext(UserContext.newBuilder().setUserId("bench"))
                          .build()
                          .toByteArray();
                  try {
                    ClientCalls.blockingUnaryCall(
                        ch,
                        CONFIG,
                        CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS),
                        request);
                  } catch (RuntimeException e) {
                    errors.incrementAndGet();
                  }
                }
              },
              "placer-" + t);
      threads.add(th);
      th.start();
    }
    for (Thread th : threads) {
      th.join();
    }
    return errors.get();
  }

  private static long heapAfterGc() throws InterruptedException {
    var memory = ManagementFactory.getMemoryMXBean();
    for (int i = 0; i < 4; i++) {
      System.gc();
      Thread.sleep(200);
    }
    return memory.getHeapMemoryUsage().getUsed();
  }

  private static long redisUsedMemory(Redis redis) {
    String info = redis.call(c -> c.info("memory"));
    for (String line : info.split("\r?\n")) {
      if (line.startsWith("used_memory:")) {
        return Long.parseLong(line.substring("used_memory:".length()).trim());
      }
    }
    return 0;
  }
}
