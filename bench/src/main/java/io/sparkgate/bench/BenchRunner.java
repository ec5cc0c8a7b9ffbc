package io.sparkgate.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToDoubleFunction;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * The whole benchmark (issue 7) in one run: starts the fake backend, both Sparkgate variants and both nginx
 * variants side by side, runs every scenario against each (scenario by scenario, so machine noise spreads
 * over all of them), the memory scenarios against Sparkgate full, then the JMH micro-benchmarks; prints a
 * table with ratios and the targets met or not, and writes it all as JSON. Start it with bench/run.sh.
 */
public final class BenchRunner {
  static final String DIRECT = "direct";
  static final String L7 = "nginx-l7";
  static final String STREAM = "nginx-stream";
  static final String FULL = "sparkgate-full";
  static final String TLS = "sparkgate-tls";

  /**
   * Sparkgate full's features with routing (issue 46): a pool of two fake backends and sessions in a real
   * redis-server the runner starts; skipped when redis-server is not installed or with --no-routed.
   */
  static final String ROUTED = "sparkgate-routed";

  /** Routing may add at most this much to the p50 of a small ExecutePlan (issue 46). */
  private static final double ROUTING_P50_BUDGET_US = 10;

  /** Placed sessions whose heap the placement footprint measures, and its budget per 100,000 (issue 46). */
  private static final int PLACED_SESSIONS = 100_000;

  private static final double PLACEMENT_MB_BUDGET = 50;

  /**
   * The variant built from --baseline-jar (TLS only; full features with --baseline-full, some with
   * --baseline-features), to compare a change before and after in one run: run-to-run noise on a shared
   * machine is larger than most changes.
   */
  static final String BASE = "sparkgate-base";

  /** The {@link FrameRelay} baseline (with --frame-relay): Java, Netty and TLS relaying HTTP/2 frames. */
  static final String RELAY = "java-relay";

  /** The same relay doing Sparkgate full's per-call work ({@link RelayFeatures}), with --frame-relay. */
  static final String RELAY_FULL = "java-relay-full";

  private static final long MB = 1_000_000;

  /** Warm-up runs in chunks this long, each over new connections. */
  private static final Duration WARMUP_CHUNK = Duration.ofSeconds(5);

  /** The JIT counts as quiet when it compiled for at most this share of a chunk. */
  private static final long QUIET_JIT_PERCENT = 2;

  /** The warm-up's chunk shapes, in turn: streams beside two closed-loop callers; 0 is one caller alone. */
  private static final int[] WARMUP_SHAPES = {4, 16, 0};

  /** However busy the JIT still is, warm-up stops at this multiple of --proxy-warmup. */
  private static final long MAX_WARMUP_FACTOR = 4;

  private final Options o;

  /** The Sparkgate variants' (and java-relay's) JVMs over JMX: JIT time, and memory for the memory scenarios. */
  private final Map<String, JvmProbe> probes = new LinkedHashMap<>();

  /** Per scenario and Sparkgate variant, the JIT's milliseconds in each measured round. */
  private final Map<String, Map<String, List<Long>>> jitMillis = new LinkedHashMap<>();

  private final Map<String, Object> json = new LinkedHashMap<>();
  private final StringBuilder table = new StringBuilder();
  private final List<String[]> targets = new ArrayList<>();

  /** Scenario -> endpoint -> CPU of the endpoint's processes (for direct: the backend's) per unit of work. */
  private final Map<String, Map<String, Double>> cpuFigures = new LinkedHashMap<>();

  /** Every round's CPU figure, by scenario and endpoint, in round order (for the paired comparisons). */
  private final Map<String, Map<String, List<Double>>> cpuRounds = new LinkedHashMap<>();

  /** Per interleaved scenario and endpoint, each round's share of its CPU spent in the kernel (CpuMeter). */
  private final Map<String, Map<String, List<Double>>> kernelShareRounds = new LinkedHashMap<>();

  /** Scenario -> endpoint -> the key figure of each round (see {@link #interleaved}). */
  private final Map<String, Map<String, List<Double>>> rounds = new LinkedHashMap<>();

  /**
   * Closed loop only: endpoint -> each round's p99. A round's p99 rests on its slowest 1% of calls and moved by
   * 140 us between rounds of one proxy where p50 moved by 20: the p99 reported (and judged) is the median of
   * the rounds' own, not the p99 of the round with the median p50.
   */
  private final Map<String, List<Double>> closedLoopP99 = new LinkedHashMap<>();

  private BenchRunner(Options o) {
    this.o = o;
  }

  /** Run parameters; {@code --quick} shrinks every phase to a few seconds. */
  static final class Options {
    boolean quick;
    boolean nginx = true;
    boolean jmh = true;
    Path jar = Path.of("target/sparkgate.jar");
    Path baselineJar; // optional: another build, run as "sparkgate-base" for before/after
    Path
        baselinePolicy; // optional: the baseline's policy file (an older build cannot read today's)
    Path policy; // optional: Sparkgate full's policy file instead of policies/shared-server.yaml
    Set<String> baselineFeatures; // the baseline's features (Endpoints.FEATURES); null: TLS only
    boolean frameRelay; // also measure the FrameRelay baseline
    boolean routed = true; // sparkgate-routed, the Redis round trip and the placement footprint
    Path out = Path.of("bench/results");
    String token;
    Duration warmup = Duration.ofSeconds(5);
    Duration measure =
        Duration.ofSeconds(10); // per round: latency and streaming run --rounds of them
    Duration proxyWarmup = Duration.ofSeconds(90); // per Sparkgate variant, before any scenario
    int[] rates = {500, 1000, 2000};
    int[] streams = {1, 4, 16};
    // Interleaved rounds of the latency and streaming scenarios. Five: with three, one slow round
    // of 10 s could move a streaming median by 10% (bench/README.md, twenty-eighth round).
    int rounds = 5;
    Duration alternating = Duration.ofSeconds(300); // the alternating latency scenario's length
    Duration bucket = Duration.ofSeconds(5); // its calls grouped for the paired figures
    int openCycles = 20; // the open loop's cycles: each endpoint one slice per cycle, at each rate
    Duration openSlice = Duration.ofSeconds(1); // a slice's measured part
    Duration openLead = Duration.ofMillis(200); // and its unmeasured lead-in at the rate
    int batchBytes = 1024 * 1024;
    long slowTotal = 1L << 30;
    long slowRate = 1L << 20;
    int idleSessions = 1000;

    /** The JVM options of the Sparkgate processes and the relays: the shipped ones, then --proxy-jvm's. */
    List<String> proxyJvm = new ArrayList<>(Endpoints.SHIPPED_JVM);

    List<String> baselineJvm = new ArrayList<>(); // the baseline's JVM options, after --proxy-jvm's
    Map<String, String> proxyEnv =
        new LinkedHashMap<>(); // environment of the Sparkgate processes and relays
    Map<String, String> baselineEnv = new LinkedHashMap<>(); // the baseline's, over --proxy-env's
    Map<String, String> baselineAudit =
        new LinkedHashMap<>(); // the baseline's audit keys, over the bench's
    Map<String, String> proxyListen =
        new LinkedHashMap<>(); // listen keys of every Sparkgate, over the bench's
    Map<String, String> baselineListen = new LinkedHashMap<>(); // the baseline's, over --listen's
    // Top-level sections the baseline's file leaves out (a build older than them refuses the keys).
    List<String> baselineDrop = new ArrayList<>();
    List<String> only; // run only the scenarios whose names contain one of these

    static Options parse(String[] args) throws IOException {
      Options o = new Options();
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--quick" -> {
            o.quick = true;
            o.rounds = 1;
            o.warmup = Duration.ofSeconds(1);
            o.measure = Duration.ofSeconds(3);
            o.proxyWarmup = Duration.ofSeconds(6);
            o.slowTotal = 24L << 20;
            o.slowRate = 4L << 20;
            o.alternating = Duration.ofSeconds(3);
            o.bucket = Duration.ofMillis(500);
            o.openCycles = 2;
            o.openSlice = Duration.ofMillis(300);
            o.openLead = Duration.ofMillis(100);
          }
          case "--no-nginx" -> o.nginx = false;
          case "--no-jmh" -> o.jmh = false;
          case "--jar" -> o.jar = Path.of(args[++i]);
          case "--baseline-jar" -> o.baselineJar = Path.of(args[++i]);
          case "--baseline-policy" -> o.baselinePolicy = Path.of(args[++i]).toAbsolutePath();
          case "--policy" -> o.policy = Path.of(args[++i]).toAbsolutePath();
          case "--baseline-full" -> o.baselineFeatures = Endpoints.FEATURES;
          case "--baseline-features" -> o.baselineFeatures = Set.of(args[++i].split(","));
          case "--frame-relay" -> o.frameRelay = true;
          case "--no-routed" -> o.routed = false;
          case "--out" -> o.out = Path.of(args[++i]);
          case "--token" -> o.token = args[++i];
          case "--token-file" -> o.token = Files.readString(Path.of(args[++i])).trim();
          case "--measure" -> o.measure = Duration.ofSeconds(Long.parseLong(args[++i]));
          case "--warmup" -> o.warmup = Duration.ofSeconds(Long.parseLong(args[++i]));
          case "--proxy-warmup" -> o.proxyWarmup = Duration.ofSeconds(Long.parseLong(args[++i]));
          case "--slow-total-mib" -> o.slowTotal = Long.parseLong(args[++i]) << 20;
          case "--slow-rate-kib" -> o.slowRate = Long.parseLong(args[++i]) << 10;
          case "--sessions" -> o.idleSessions = Integer.parseInt(args[++i]);
          case "--proxy-jvm" -> addJvmOption(o.proxyJvm, args[++i]);
          case "--baseline-jvm" -> o.baselineJvm.add(args[++i]);
          case "--proxy-env" ->
              putKeyValue(o.proxyEnv, "--proxy-env", "an environment variable", args[++i]);
          case "--baseline-env" ->
              putKeyValue(o.baselineEnv, "--baseline-env", "an environment variable", args[++i]);
          case "--baseline-audit" ->
              putKeyValue(o.baselineAudit, "--baseline-audit", "an audit key", args[++i]);
          case "--listen" -> putKeyValue(o.proxyListen, "--listen", "a listen key", args[++i]);
          case "--baseline-listen" ->
              putKeyValue(o.baselineListen, "--baseline-listen", "a listen key", args[++i]);
          case "--baseline-drop" -> o.baselineDrop.add(args[++i]);
          case "--only" -> o.only = List.of(args[++i].split(","));
          case "--alternating" -> o.alternating = Duration.ofSeconds(Long.parseLong(args[++i]));
          case "--bucket-ms" -> o.bucket = Duration.ofMillis(Long.parseLong(args[++i]));
          case "--open-cycles" -> o.openCycles = Integer.parseInt(args[++i]);
          case "--open-slice-ms" -> o.openSlice = Duration.ofMillis(Long.parseLong(args[++i]));
          case "--rounds" -> {
            o.rounds = Integer.parseInt(args[++i]);
            if (o.rounds < 1) throw new IllegalArgumentException("--rounds must be at least 1");
          }
          default ->
              throw new IllegalArgumentException(
                  "unknown option " + args[i] + " (see bench/README.md)");
        }
      }
      if (o.bucket.toMillis() < 100 || o.alternating.compareTo(o.bucket.multipliedBy(2)) < 0) {
        throw new IllegalArgumentException(
            "--bucket-ms must be at least 100 and --alternating at least two buckets"
                + " long (the buckets are paired), not "
                + o.bucket.toMillis()
                + " ms and "
                + o.alternating.toSeconds()
                + " s");
      }
      if (o.openCycles < 2 || o.openSlice.toMillis() < 100) {
        throw new IllegalArgumentException(
            "--open-cycles must be at least 2 (the cycles are paired) and"
                + " --open-slice-ms at least 100, not "
                + o.openCycles
                + " and "
                + o.openSlice.toMillis());
      }
      if ((o.baselineFeatures != null
              || !o.baselineJvm.isEmpty()
              || !o.baselineAudit.isEmpty()
              || !o.baselineListen.isEmpty()
              || !o.baselineEnv.isEmpty()
              || !o.baselineDrop.isEmpty()
              || o.baselinePolicy != null)
          && o.baselineJar == null) {
        throw new IllegalArgumentException(
            "--baseline-full, --baseline-features, --baseline-jvm, --baseline-env, --baseline-audit,"
                + " --baseline-listen, --baseline-drop and --baseline-policy need --baseline-jar");
      }
      if (o.baselineFeatures != null
          && !o.baselineFeatures.stream()
              .allMatch(
                  f -> Endpoints.FEATURES.contains(f) || Endpoints.EXTRA_FEATURES.contains(f))) {
        throw new IllegalArgumentException(
            "--baseline-features takes a comma list of "
                + Endpoints.FEATURES
                + " and "
                + Endpoints.EXTRA_FEATURES
                + ", not "
                + String.join(",", o.baselineFeatures));
      }
      return o;
    }
  }

  /** KEY=VALUE into {@code keys}, or a message naming the option. */
  private static void putKeyValue(
      Map<String, String> keys, String option, String what, String arg) {
    String[] kv = arg.split("=", 2);
    if (kv.length != 2 || kv[0].isBlank()) {
      throw new IllegalArgumentException(option + " takes KEY=VALUE (" + what + "), not " + arg);
    }
    keys.put(kv[0].trim(), kv[1].trim());
  }

  /** A Sparkgate variant's listen keys: --listen's, and for the baseline --baseline-listen's over them. */
  private Map<String, String> listenKeys(String variant) {
    Map<String, String> keys = new LinkedHashMap<>(o.proxyListen);
    if (variant.equals(BASE)) {
      keys.putAll(o.baselineListen);
    }
    return keys;
  }

  /** A Sparkgate variant's environment: --proxy-env's, and for the baseline --baseline-env's over them. */
  private Map<String, String> environment(String variant) {
    Map<String, String> env = new LinkedHashMap<>(o.proxyEnv);
    if (variant.equals(BASE)) {
      env.putAll(o.baselineEnv);
    }
    return env;
  }

  /** A Sparkgate variant's JVM options: --proxy-jvm's, and for the baseline --baseline-jvm's after them. */
  private List<String> jvmOptions(String variant) {
    if (!variant.equals(BASE) || o.baselineJvm.isEmpty()) {
      return o.proxyJvm;
    }
    List<String> jvm = new ArrayList<>(o.proxyJvm);
    o.baselineJvm.forEach(option -> addJvmOption(jvm, option));
    return jvm;
  }

  /** Appends a JVM option; one that selects a collector replaces any chosen before (the JVM refuses two). */
  private static void addJvmOption(List<String> jvm, String option) {
    if (COLLECTOR.matcher(option).matches()) {
      jvm.removeIf(chosen -> COLLECTOR.matcher(chosen).matches());
    }
    jvm.add(option);
  }

  private static final java.util.regex.Pattern COLLECTOR =
      java.util.regex.Pattern.compile("-XX:\\+Use\\w+GC");

  public static void main(String[] args) throws Exception {
    Options o = Options.parse(args);
    new BenchRunner(o).run();
    System.exit(0); // channels' and JMX's non-daemon threads must not keep the runner alive
  }

  private boolean wants(String scenario) {
    return o.only == null || o.only.stream().anyMatch(scenario::contains);
  }

  private void run() throws Exception {
    Path work = Files.createTempDirectory("sparkgate-bench-");
    json.put("started", LocalDateTime.now().toString());
    json.put("machine", machine());
    json.put("mode", o.quick ? "quick" : "full");
    json.put("proxy_jvm", o.proxyJvm);
    if (!o.proxyListen.isEmpty()) {
      json.put("proxy_listen", o.proxyListen);
    }
    if (!o.proxyEnv.isEmpty()) {
      json.put("proxy_env", o.proxyEnv);
    }
    if (o.baselineJar != null) {
      json.put("baseline_jvm", jvmOptions(BASE));
      if (!environment(BASE).isEmpty()) {
        json.put("baseline_env", environment(BASE));
      }
      if (!listenKeys(BASE).isEmpty()) {
        json.put("baseline_listen", listenKeys(BASE));
      }
    }
    log("work directory " + work);
    Map<String, LoadGenerator.Target> t = new LinkedHashMap<>();
    Map<String, Map<String, Object>> results = new LinkedHashMap<>();
    try (Endpoints ep = new Endpoints(work)) {
      Path certs = work.resolve("certs");
      Process dev =
          new ProcessBuilder(
                  Endpoints.javaBin(),
                  "-jar",
                  o.jar.toString(),
                  "dev-certs",
                  "--out",
                  certs.toString())
              .redirectErrorStream(true)
              .redirectOutput(work.resolve("dev-certs.log").toFile())
              .start();
      if (dev.waitFor() != 0) {
        throw new IllegalStateException(
            "dev-certs failed: " + Files.readString(work.resolve("dev-certs.log")));
      }
      Path ca = certs.resolve("ca.pem");
      Map<String, Process> processes = new LinkedHashMap<>();
      int backendPort = ep.startBackend();
      processes.put(DIRECT, ep.backendProcess());
      t.put(DIRECT, new LoadGenerator.Target(DIRECT, "127.0.0.1", backendPort, null, null));
      Endpoints.waitReady(t.get(DIRECT), null, Duration.ofSeconds(60));

      Path nginx = o.nginx ? Endpoints.nginxBinary() : null;
      if (nginx != null) {
        int p = Endpoints.freePort();
        Process n = ep.startNginxL7(nginx, p, backendPort, certs);
        processes.put(L7, n);
        t.put(L7, new LoadGenerator.Target(L7, "127.0.0.1", p, ca, o.token));
        Endpoints.waitReady(t.get(L7), n, Duration.ofSeconds(30));
        Path module = Endpoints.streamModule();
        if (module != null) {
          p = Endpoints.freePort();
          n = ep.startNginxStream(nginx, module, p, backendPort, certs);
          processes.put(STREAM, n);
          t.put(STREAM, new LoadGenerator.Target(STREAM, "127.0.0.1", p, ca, o.token));
          Endpoints.waitReady(t.get(STREAM), n, Duration.ofSeconds(30));
        } else {
          log(
              "nginx stream module not found (apt-get install libnginx-mod-stream): no TLS-terminator baseline");
        }
      } else {
        log(
            "nginx not used ("
                + (o.nginx ? "not installed" : "--no-nginx")
                + "): no nginx baselines");
      }
      List<String> variants = new ArrayList<>(List.of(FULL, TLS));
      // Routing: a throwaway redis-server, for sparkgate-routed and for the Redis round trip and
      // the placement footprint.
      String redisUrl = null;
      if (o.routed) {
        Path redisServer = Endpoints.redisServerBinary();
        if (redisServer == null) {
          log(
              "redis-server not installed (apt-get install redis-server): no "
                  + ROUTED
                  + ", no Redis round trip, placement footprint with the memory store only");
          json.put("routed_skipped", "redis-server not installed");
        } else {
          int redisPort = ep.startRedis(redisServer);
          redisUrl = "redis://127.0.0.1:" + redisPort + "/0";
          log("redis-server on port " + redisPort);
          variants.add(ROUTED);
        }
      }
      if (o.baselineJar != null) {
        variants.add(BASE);
      }
      for (String name : variants) {
        int p = Endpoints.freePort();
        int jmx = Endpoints.freePort();
        Set<String> features =
            name.equals(FULL) || name.equals(ROUTED)
                ? Endpoints.FEATURES
                : name.equals(BASE) && o.baselineFeatures != null ? o.baselineFeatures : Set.of();
        Path cfg =
            ep.sparkgateConfig(
                name,
                p,
                backendPort,
                certs,
                features,
                name.equals(BASE) ? o.baselineAudit : Map.of(),
                listenKeys(name),
                name.equals(BASE) ? o.baselinePolicy : name.equals(FULL) ? o.policy : null,
                name.equals(ROUTED) ? new Endpoints.Routing(redisUrl) : null);
        if (name.equals(BASE)) {
          Endpoints.dropSections(cfg, o.baselineDrop);
        }
        Process sp =
            ep.startSparkgate(
                name,
                name.equals(BASE) ? o.baselineJar : o.jar,
                cfg,
                jmx,
                jvmOptions(name),
                environment(name));
        processes.put(name, sp);
        // A Sparkgate with JWT authentication accepts only the JWT minted for its configuration.
        t.put(
            name,
            new LoadGenerator.Target(
                name, "127.0.0.1", p, ca, features.contains("jwt") ? ep.jwtToken(name) : o.token));
        Endpoints.waitReady(t.get(name), sp, Duration.ofSeconds(60));
        probes.put(name, JvmProbe.connect(jmx, sp.pid()));
      }
      List<String> warmed = new ArrayList<>(variants);
      if (o.frameRelay) {
        for (String name : List.of(RELAY, RELAY_FULL)) {
          int p = Endpoints.freePort();
          int jmx = Endpoints.freePort();
          // java-relay-full: Sparkgate full's configuration (its listen section unused), and so its
          // JWT.
          Path cfg =
              name.equals(RELAY)
                  ? null
                  : ep.sparkgateConfig(
                      name, p, backendPort, certs, Endpoints.FEATURES, Map.of(), Map.of(), null);
          Process relay =
              ep.startFrameRelay(name, p, backendPort, certs, jmx, cfg, o.proxyJvm, o.proxyEnv);
          processes.put(name, relay);
          t.put(
              name,
              new LoadGenerator.Target(
                  name, "127.0.0.1", p, ca, cfg == null ? o.token : ep.jwtToken(name)));
          Endpoints.waitReady(t.get(name), relay, Duration.ofSeconds(60));
          probes.put(name, JvmProbe.connect(jmx, relay.pid()));
          warmed.add(name);
        }
      }
      log("endpoints up: " + t.keySet());
      // A fresh proxy JVM spends its first minute or two compiling its hot paths: profiled, C2 took
      // 35-45% of its CPU during the first scenario, with single compilations of Netty's pipeline
      // taking over a second on this machine. Production proxies run for days, so each Sparkgate
      // gets small calls and streams before anything is measured (which also warms the backend);
      // see warmUp for how.
      log("warming up " + warmed + " in turn, at least " + o.proxyWarmup.toSeconds() + " s each");
      warmUp(warmed, t);

      // Latency: closed loop, one caller.
      if (wants("latency")) {
        interleaved(
            "closed-loop latency",
            "closed_loop",
            t,
            processes,
            target -> LoadGenerator.closedLoop(target, 1, o.warmup, o.measure),
            r -> r.latency().p50(),
            r -> r.latency().p99(),
            false,
            // Per call, from the average CPU rate over warm-up and measurement and the measured
            // call rate.
            "closed_loop_us_per_call",
            (cores, r) -> cores * 1e6 / r.callsPerSecond(),
            results);
      }
      // The same measurement with the endpoints called in turn (see Alternating): what the latency
      // target is judged by when it ran, because only it resolves gaps of a few microseconds on a
      // noisy machine.
      if (wants("alternating")) {
        log(
            String.format(
                "alternating latency: %d s, the endpoints called in turn",
                o.alternating.toSeconds()));
        Map<String, Process> ownCpu = new LinkedHashMap<>(processes);
        ownCpu.remove(DIRECT); // the backend serves every endpoint's calls here
        results
            .computeIfAbsent("alternating", k -> new LinkedHashMap<>())
            .putAll(Alternating.run(t, ownCpu, probes, o.alternating, o.bucket, BenchRunner::log));
      }
      if (wants("open")) {
        // The endpoints in turn, a slice each per cycle, paired by cycle (see PairedOpenLoop):
        // measured one window per endpoint, even in interleaved rounds, full's p99 at 2,000/s was
        // two to three times TLS-only's in one run and level with it in the next.
        for (int rate : o.rates) {
          log(
              String.format(
                  "open loop %d/s: %d cycles, each endpoint %d ms (after a %d ms lead-in) per cycle",
                  rate, o.openCycles, o.openSlice.toMillis(), o.openLead.toMillis()));
          results
              .computeIfAbsent("open_loop_" + rate, k -> new LinkedHashMap<>())
              .putAll(
                  PairedOpenLoop.run(
                      t, processes, rate, o.openCycles, o.openLead, o.openSlice, BenchRunner::log));
        }
      }
      if (wants("stream")) {
        for (int n : o.streams) {
          interleaved(
              "streaming x" + n,
              "streaming_" + n,
              t,
              processes,
              target -> LoadGenerator.streaming(target, n, o.batchBytes, 64, o.warmup, o.measure),
              LoadGenerator.Streaming::mbPerSecond,
              null,
              true,
              "streaming_" + n + "_cpu_seconds_per_gb",
              (cores, r) -> cores * 1000 / r.mbPerSecond(),
              results);
        }
      }
      if (wants("saturation")) {
        for (var e : t.entrySet()) {
          log("saturation, " + Saturation.CALLERS + " callers: " + e.getKey());
          // An endpoint audits when its configuration has audit, and then its log opened the file
          // at start.
          Path auditFile = ep.auditFile(e.getKey());
          var audit =
              Files.exists(auditFile)
                  ? new Saturation.Audit(ep.logFile(e.getKey()), auditFile)
                  : null;
          results
              .computeIfAbsent("saturation", k -> new LinkedHashMap<>())
              .put(
                  e.getKey(),
                  Saturation.run(
                      e.getValue(), processes.get(e.getKey()), audit, o.warmup, o.measure));
        }
      }
      if (!rounds.isEmpty()) {
        json.put("rounds", rounds);
        json.put("closed_loop_p99_rounds", closedLoopP99);
        json.put("jit_ms_per_round", jitMillis);
        json.put("cpu_rounds", cpuRounds);
        json.put("cpu_kernel_share_rounds", kernelShareRounds);
      }
      json.put("results", results);
      json.put("cpu", cpuFigures);
      Map<String, Object> memory = new LinkedHashMap<>();
      json.put("memory", memory);
      if (wants("idle")) {
        memory.put("idle_sessions", idleSessions(t.get(FULL), probes.get(FULL)));
      }
      if (wants("slow")) {
        memory.put("slow_reader", slowReader(t.get(FULL), probes.get(FULL)));
      }
      if (redisUrl != null && wants("redis")) {
        int calls = o.quick ? 5_000 : 20_000;
        log("Redis round trip: " + calls + " GETs and " + calls + " quota EVALs, one at a time");
        Map<String, Object> rt = RoutingCost.redisRoundTrip(redisUrl, 2_000, calls);
        log("Redis round trip: " + rt);
        json.put("redis_round_trip", rt);
      }
      if (o.routed && wants("placement")) {
        Map<String, Object> fp = new LinkedHashMap<>();
        log("placement footprint: " + PLACED_SESSIONS + " sessions, memory store");
        fp.put(
            "memory",
            RoutingCost.placementFootprint(
                work.resolve("footprint"), null, PLACED_SESSIONS, BenchRunner::log));
        if (redisUrl != null) {
          log("placement footprint: " + PLACED_SESSIONS + " sessions, redis store (database 1)");
          fp.put(
              "redis",
              RoutingCost.placementFootprint(
                  work.resolve("footprint"),
                  redisUrl.replaceAll("/0$", "/1"),
                  PLACED_SESSIONS,
                  BenchRunner::log));
        }
        json.put("placement_footprint", fp);
      }
    } finally {
      for (JvmProbe probe : probes.values()) {
        try {
          probe.close();
        } catch (IOException e) {
          // Its JVM has stopped already: the endpoints close first.
        }
      }
      probes.clear();
    }
    Exception jmhFailure = null;
    if (o.jmh && wants("jmh")) {
      try {
        json.put("jmh", jmh());
      } catch (Exception e) {
        // Last in the run: an hour of figures must not be lost with it. Written below, then the run
        // fails.
        jmhFailure = e;
        json.put("jmh_error", String.valueOf(e));
        log("JMH failed; the other results are written, and the run then fails: " + e);
      }
    }
    json.put("finished", LocalDateTime.now().toString());
    report(results);
    Files.createDirectories(o.out);
    Path file =
        o.out.resolve(
            DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").format(LocalDateTime.now()) + ".json");
    json.put("table", table.toString().lines().toList());
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), json);
    System.out.println(table);
    System.out.println("written " + file);
    if (jmhFailure != null) {
      throw jmhFailure;
    }
  }

  /**
   * Small calls and streams together, and small calls from one caller alone (see WARMUP_SHAPES), over fresh
   * connections every few seconds, for at least
   * {@code --proxy-warmup} and then until the JIT is quiet. Both at once because HotSpot drops a queued
   * compilation whose method stops running: with a small-call half then a streaming half, -XX:+PrintCompilation
   * showed Netty's HPACK decoder and SslHandler.write first reaching C2 inside the latency windows. Fresh
   * connections because C2 compiles out the branches a profile never took: with one set of connections for
   * the whole warm-up, the first new connection of each scenario (TLS handshake, an empty HPACK table, a new
   * session) threw away the compiled code of about a hundred hot methods, which then ran interpreted and
   * C1-compiled in the measurement. Until the JIT is quiet because on two busy cores C2 falls minutes behind
   * (the full proxy still compiled 800 methods in its first latency window after 60 s of warm-up), and a
   * production proxy that runs for days is measured at its steady state, not while it compiles.
   *
   * <p>The endpoints warm up in turn, a chunk each, and go on until every one is warm: warmed one after the
   * other, the first sat idle for minutes while the others warmed, then compiled for 0.6-2.4 s in its first
   * window, and in two runs of the same build and features as both full and baseline ("A/A"), the proxy
   * warmed first was 17-24 us slower at p50 in every round.
   */
  private void warmUp(List<String> names, Map<String, LoadGenerator.Target> t) throws Exception {
    Duration chunk = o.proxyWarmup.compareTo(WARMUP_CHUNK) < 0 ? o.proxyWarmup : WARMUP_CHUNK;
    long min = o.proxyWarmup.toNanos();
    long max = o.quick ? min : MAX_WARMUP_FACTOR * min;
    long quietMillis = chunk.toMillis() * QUIET_JIT_PERCENT / 100;
    Map<String, Long> jitStart = new LinkedHashMap<>();
    for (String name : names) {
      jitStart.put(name, probes.get(name).jitMillis());
    }
    // Each endpoint's JIT milliseconds in its last chunks, one of each shape, newest last.
    Map<String, ArrayDeque<Long>> recentJit = new LinkedHashMap<>();
    long each = 0; // warm-up time each endpoint has had
    int round = 0;
    boolean quiet;
    do {
      // Three shapes in turn. 4 streams and 16: 16 take code paths (and type profiles) 4 never
      // reach, which the eleventh round's full run still compiled for up to half a second in its
      // 16-stream windows. And one caller alone, as the latency scenarios call: a lightly loaded
      // proxy takes branches a busy one never does (an idle audit writer, event loops that sleep
      // between calls), and the full proxy still compiled for 728 ms in its first closed-loop
      // window after a warm-up of the two busy shapes (twenty-sixth round).
      int streams = WARMUP_SHAPES[round++ % WARMUP_SHAPES.length];
      for (String name : names) {
        ArrayDeque<Long> recent = recentJit.computeIfAbsent(name, n -> new ArrayDeque<>());
        recent.addLast(warmUpChunk(t.get(name), probes.get(name), chunk, streams));
        if (recent.size() > WARMUP_SHAPES.length) {
          recent.removeFirst();
        }
      }
      each += chunk.toNanos();
      // Quiet under every shape: the last chunk of each.
      quiet =
          round >= WARMUP_SHAPES.length
              && names.stream()
                  .allMatch(n -> recentJit.get(n).stream().allMatch(ms -> ms <= quietMillis));
    } while (each < max && (each < min || !quiet));
    for (String name : names) {
      long last = recentJit.get(name).stream().mapToLong(Long::longValue).max().orElse(0);
      boolean q = last <= quietMillis;
      log(
          String.format(
              "warmed up %s for %d s: JIT %d ms in all, at most %d ms in each of its last %d chunks of %d s%s",
              name,
              TimeUnit.NANOSECONDS.toSeconds(each),
              probes.get(name).jitMillis() - jitStart.get(name),
              last,
              recentJit.get(name).size(),
              chunk.toSeconds(),
              q
                  ? ""
                  : o.quick
                      ? " (still compiling: --quick does not wait)"
                      : " (still compiling; stopped at "
                          + MAX_WARMUP_FACTOR
                          + "x --proxy-warmup)"));
    }
  }

  /** One chunk of warm-up on new connections; the JIT's milliseconds meanwhile. */
  private long warmUpChunk(
      LoadGenerator.Target target, JvmProbe jit, Duration chunk, int streamCount) throws Exception {
    long before = jit.jitMillis();
    CompletableFuture<?> streams =
        streamCount == 0
            ? CompletableFuture.completedFuture(null)
            : CompletableFuture.supplyAsync(
                () -> {
                  try {
                    return LoadGenerator.streaming(
                        target, streamCount, o.batchBytes, 64, Duration.ZERO, chunk);
                  } catch (InterruptedException e) {
                    throw new CompletionException(e);
                  }
                });
    LoadGenerator.closedLoop(target, streamCount == 0 ? 1 : 2, Duration.ZERO, chunk);
    streams.join();
    return jit.jitMillis() - before;
  }

  /** One measurement of one endpoint. */
  @FunctionalInterface
  private interface Measurement<R> {
    R run(LoadGenerator.Target target) throws Exception;
  }

  /**
   * Measures every endpoint {@code --rounds} times, interleaved: round r runs the endpoints in an order rotated
   * by r, so a machine that drifts (another job, thermal or host noise; on this 2-core VM run-to-run noise was as
   * large as the gaps between proxies) weighs on every endpoint alike instead of on whichever ran last. Each
   * endpoint reports its median round by {@code key} (latency: p50; streaming: MB/s), with the CPU figure of that
   * same round; every round's key figure is kept in the JSON under "rounds". {@code p99} (null: none) is a
   * round's tail, reported as its median over the rounds (see {@link #closedLoopP99}).
   */
  private <R> void interleaved(
      String what,
      String scenario,
      Map<String, LoadGenerator.Target> t,
      Map<String, Process> processes,
      Measurement<R> measurement,
      ToDoubleFunction<R> key,
      ToDoubleFunction<R> p99,
      boolean higherIsBetter,
      String cpuScenario,
      CpuPer<R> cpuPer,
      Map<String, Map<String, Object>> results)
      throws Exception {
    List<String> names = new ArrayList<>(t.keySet());
    Map<String, List<R>> byEndpoint = new LinkedHashMap<>();
    Map<String, List<Double>> cpuByEndpoint = new LinkedHashMap<>();
    for (int round = 0; round < o.rounds; round++) {
      for (int i = 0; i < names.size(); i++) {
        String name = names.get((i + round) % names.size());
        log(
            what
                + ": "
                + name
                + (o.rounds > 1 ? " (round " + (round + 1) + " of " + o.rounds + ")" : ""));
        JvmProbe jvm = probes.get(name);
        long jitBefore = jvm == null ? 0 : jvm.jitMillis();
        CpuMeter cpu = CpuMeter.start(processes.get(name));
        R r = measurement.run(t.get(name));
        double cores = cpu.coresUsed();
        double kernel = cpu.kernelShare();
        kernelShareRounds
            .computeIfAbsent(scenario, k -> new LinkedHashMap<>())
            .computeIfAbsent(name, k -> new ArrayList<>())
            .add(kernel);
        if (!Double.isNaN(kernel)) {
          log(String.format("  %s: %.0f%% of its CPU in the kernel", name, 100 * kernel));
        }
        if (jvm != null) {
          // Shows whether a proxy was measured at its steady state or while still compiling.
          long jit = jvm.jitMillis() - jitBefore;
          jitMillis
              .computeIfAbsent(scenario, k -> new LinkedHashMap<>())
              .computeIfAbsent(name, k -> new ArrayList<>())
              .add(jit);
          log("  " + name + ": JIT compiled for " + jit + " ms during this window");
        }
        byEndpoint.computeIfAbsent(name, k -> new ArrayList<>()).add(r);
        cpuByEndpoint.computeIfAbsent(name, k -> new ArrayList<>()).add(cpuPer.of(cores, r));
      }
    }
    Map<String, Object> row = results.computeIfAbsent(scenario, k -> new LinkedHashMap<>());
    Map<String, Double> cpuRow =
        cpuFigures.computeIfAbsent(cpuScenario, k -> new LinkedHashMap<>());
    Map<String, List<Double>> keys = new LinkedHashMap<>();
    for (String name : names) { // in the endpoints' own order, whatever order they ran in
      List<R> rs = byEndpoint.get(name);
      Integer[] order = new Integer[rs.size()];
      for (int i = 0; i < order.length; i++) order[i] = i;
      java.util.Arrays.sort(
          order,
          (a, b) -> Double.compare(key.applyAsDouble(rs.get(a)), key.applyAsDouble(rs.get(b))));
      int median = order[(order.length - 1) / 2];
      if (higherIsBetter && order.length % 2 == 0)
        median = order[order.length / 2]; // the better of the middle two
      row.put(name, rs.get(median));
      cpuRow.put(name, cpuByEndpoint.get(name).get(median));
      keys.put(name, rs.stream().map(key::applyAsDouble).toList());
      cpuRounds
          .computeIfAbsent(scenario, k -> new LinkedHashMap<>())
          .put(name, cpuByEndpoint.get(name));
      if (p99 != null) {
        closedLoopP99.put(name, rs.stream().map(p99::applyAsDouble).toList());
      }
    }
    rounds.put(scenario, keys);
  }

  /** The CPU figure of a round: from the cores the endpoint used on average and the round's result. */
  @FunctionalInterface
  private interface CpuPer<R> {
    double of(double coresUsed, R result);
  }

  /**
   * Sparkgate full against the baseline build and against nginx L7, round by round (see {@link Paired}): what
   * a same-run A/B or the latency target is judged by when the medians of the rounds overlap.
   */
  private void pairedByRound(Map<String, Object> closed) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (String other : List.of(BASE, L7)) {
      if (!closed.containsKey(FULL) || !closed.containsKey(other) || o.rounds < 2) {
        continue;
      }
      Map<String, Paired> figures = new LinkedHashMap<>();
      figures.put(
          "p50",
          Paired.of(rounds.get("closed_loop").get(FULL), rounds.get("closed_loop").get(other)));
      figures.put("p99", Paired.of(closedLoopP99.get(FULL), closedLoopP99.get(other)));
      Map<String, List<Double>> cpu = cpuRounds.getOrDefault("closed_loop", Map.of());
      figures.put("cpu/call", Paired.of(cpu.get(FULL), cpu.get(other)));
      line(
          "%s minus %s, paired by round (us; median of the differences, and the rounds where %s was lower):",
          FULL, other, FULL);
      out.put(FULL + " - " + other, pairedLines("rounds", figures));
    }
    if (closed.containsKey(ROUTED) && closed.containsKey(FULL)) {
      var fr = (LoadGenerator.ClosedLoop) closed.get(FULL);
      var rr = (LoadGenerator.ClosedLoop) closed.get(ROUTED);
      double added = rr.latency().p50() - fr.latency().p50();
      target(
          "routing adds <= "
              + (int) ROUTING_P50_BUDGET_US
              + " us to full's p50 (closed loop, median rounds)",
          added <= ROUTING_P50_BUDGET_US,
          String.format(
              "routed %.1f us, full %.1f us: %+.1f us",
              rr.latency().p50(), fr.latency().p50(), added));
      if (o.rounds >= 2) {
        Map<String, Paired> figures = new LinkedHashMap<>();
        figures.put(
            "p50",
            Paired.of(rounds.get("closed_loop").get(ROUTED), rounds.get("closed_loop").get(FULL)));
        figures.put("p99", Paired.of(closedLoopP99.get(ROUTED), closedLoopP99.get(FULL)));
        Map<String, List<Double>> cpu = cpuRounds.getOrDefault("closed_loop", Map.of());
        figures.put("cpu/call", Paired.of(cpu.get(ROUTED), cpu.get(FULL)));
        line(
            "%s minus %s, paired by round (us; median of the differences, and the rounds where %s was lower):",
            ROUTED, FULL, ROUTED);
        out.put(ROUTED + " - " + FULL, pairedLines("rounds", figures));
      }
    }
    if (!out.isEmpty()) {
      line("");
      this.json.put("closed_loop_paired", out);
    }
  }

  /**
   * The alternating scenario: each endpoint's calls as one distribution, then Sparkgate full against nginx L7,
   * TLS-only and the baseline bucket by bucket, and the latency target judged on the paired medians.
   */
  private void reportAlternating(Map<String, Object> rows) {
    line(
        "Small ExecutePlan, closed loop, 1 caller calling the endpoints in turn for %d s (us; all their calls;"
            + " cpu/call = median of the %d ms buckets, none for direct, whose backend serves every endpoint;"
            + " for a JVM proxy its heap over all the calls: KB allocated per call, collections and their total ms)",
        o.alternating.toSeconds(), o.bucket.toMillis());
    line(
        "%-15s %9s %9s %9s %9s %9s %9s | %8s %8s | %8s %8s %8s | %8s %5s %6s",
        "endpoint",
        "p50",
        "p99",
        "p99.9",
        "calls/s",
        "errors",
        "cpu/call",
        "+p50",
        "+p99",
        "p50xdir",
        "p50xTLS",
        "p50xL7",
        "KB/call",
        "GCs",
        "GC ms");
    var d = (Alternating.Result) rows.get(DIRECT);
    for (var e : rows.entrySet()) {
      var r = (Alternating.Result) e.getValue();
      boolean jvm = !Double.isNaN(r.allocatedBytesPerCall());
      line(
          "%-15s %9.1f %9.1f %9.1f %9.0f %9d %9.1f | %8.1f %8.1f | %8s %8s %8s | %8s %5s %6s",
          e.getKey(),
          r.latency().p50(),
          r.latency().p99(),
          r.latency().p999(),
          r.callsPerSecond(),
          r.errors(),
          Paired.median(r.bucketCpuPerCall()),
          r.latency().p50() - d.latency().p50(),
          r.latency().p99() - d.latency().p99(),
          ratio(rows, e.getKey(), DIRECT, x -> ((Alternating.Result) x).latency().p50()),
          ratio(rows, e.getKey(), STREAM, x -> ((Alternating.Result) x).latency().p50()),
          ratio(rows, e.getKey(), L7, x -> ((Alternating.Result) x).latency().p50()),
          jvm ? String.format("%.1f", r.allocatedBytesPerCall() / 1024) : "-",
          jvm ? r.collections() : "-",
          jvm ? r.collectionMillis() : "-");
    }
    line("");
    Map<String, Object> out = new LinkedHashMap<>();
    var full = (Alternating.Result) rows.get(FULL);
    for (String other : List.of(L7, TLS, BASE)) {
      var b = (Alternating.Result) rows.get(other);
      if (full == null || b == null) {
        continue;
      }
      line(
          "%s minus %s, paired by %d ms bucket (us; median of the differences, its 95%% interval, and the"
              + " buckets where %s was lower):",
          FULL, other, o.bucket.toMillis(), FULL);
      Map<String, Paired> figures = new LinkedHashMap<>();
      figures.put("p50", Paired.of(full.bucketP50(), b.bucketP50()));
      figures.put("p99", Paired.of(full.bucketP99(), b.bucketP99()));
      figures.put("cpu/call", Paired.of(full.bucketCpuPerCall(), b.bucketCpuPerCall()));
      out.put(FULL + " - " + other, pairedLines("buckets", figures));
      if (other.equals(L7)) {
        // Both are added to the same direct path, call by call, so "adds no more than nginx L7
        // adds" is the difference itself: met when the median bucket has full no slower.
        alternatingTarget("p50", figures.get("p50"));
        alternatingTarget("p99", figures.get("p99"));
      }
    }
    var routed = (Alternating.Result) rows.get(ROUTED);
    if (full != null && routed != null) {
      line(
          "%s minus %s, paired by %d ms bucket (us; median of the differences, its 95%% interval, and the"
              + " buckets where %s was lower):",
          ROUTED, FULL, o.bucket.toMillis(), ROUTED);
      Map<String, Paired> figures = new LinkedHashMap<>();
      figures.put("p50", Paired.of(routed.bucketP50(), full.bucketP50()));
      figures.put("p99", Paired.of(routed.bucketP99(), full.bucketP99()));
      figures.put("cpu/call", Paired.of(routed.bucketCpuPerCall(), full.bucketCpuPerCall()));
      out.put(ROUTED + " - " + FULL, pairedLines("buckets", figures));
      Paired p50 = figures.get("p50");
      String name =
          "routing adds <= "
              + (int) ROUTING_P50_BUDGET_US
              + " us to full's p50 (alternating, paired by bucket)";
      if (p50 == null) {
        target(name, null, "too few buckets");
      } else {
        double[] ci = p50.confidence95();
        target(
            name,
            p50.median() <= ROUTING_P50_BUDGET_US,
            String.format(
                "routed minus full %+.1f us%s, lower in %d of %d buckets",
                p50.median(),
                ci == null ? "" : String.format(" (95%% %+.1f to %+.1f)", ci[0], ci[1]),
                p50.lowerIn(),
                p50.differences().size()));
      }
    }
    if (full != null && !rows.containsKey(L7)) {
      target(
          "Sparkgate full adds <= nginx L7's p50/p99 latency (alternating)",
          null,
          "nginx L7 not run");
    }
    line("");
    json.put("alternating_paired", out);
  }

  /**
   * The open loop at one rate: each endpoint's calls over all its slices, then Sparkgate full against nginx L7,
   * TLS-only and the baseline cycle by cycle. No target: the issue sets none for the open loop.
   */
  private void reportOpenLoop(int rate, Map<String, Object> rows) {
    line(
        "Small ExecutePlan, open loop at %d/s on one connection, the endpoints in turn: %d cycles of a %d ms slice"
            + " each (us; all measured calls; 'CO' = corrected for coordinated omission; cpu/call = median slice's CPU"
            + " of the endpoint's processes per call started)",
        rate, o.openCycles, o.openSlice.toMillis());
    line(
        "%-15s %9s %9s %9s %9s %9s %9s %9s %7s %9s | %8s %8s %8s",
        "endpoint",
        "achieved",
        "p50",
        "p99",
        "p99.9",
        "CO p50",
        "CO p99",
        "CO p99.9",
        "errors",
        "cpu/call",
        "p99xdir",
        "p99xTLS",
        "p99xL7");
    ToDoubleFunction<Object> coP99 = x -> ((PairedOpenLoop.Result) x).all().corrected().p99();
    for (var e : rows.entrySet()) {
      var r = (PairedOpenLoop.Result) e.getValue();
      var all = r.all();
      line(
          "%-15s %9.0f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %7d %9.1f | %8s %8s %8s",
          e.getKey(),
          all.achievedRate(),
          all.latency().p50(),
          all.latency().p99(),
          all.latency().p999(),
          all.corrected().p50(),
          all.corrected().p99(),
          all.corrected().p999(),
          all.errors(),
          Paired.median(r.sliceCpuPerCall()),
          ratio(rows, e.getKey(), DIRECT, coP99),
          ratio(rows, e.getKey(), STREAM, coP99),
          ratio(rows, e.getKey(), L7, coP99));
    }
    var full = (PairedOpenLoop.Result) rows.get(FULL);
    Map<String, Object> out = new LinkedHashMap<>();
    for (String other : List.of(L7, TLS, BASE)) {
      var b = (PairedOpenLoop.Result) rows.get(other);
      if (full == null || b == null) {
        continue;
      }
      line(
          "%s minus %s, paired by cycle (us; median of the differences, its 95%% interval, and the cycles where"
              + " %s was lower):",
          FULL, other, FULL);
      Map<String, Paired> figures = new LinkedHashMap<>();
      figures.put("CO p50", Paired.of(full.sliceCorrectedP50(), b.sliceCorrectedP50()));
      figures.put("CO p99", Paired.of(full.sliceCorrectedP99(), b.sliceCorrectedP99()));
      figures.put("cpu/call", Paired.of(full.sliceCpuPerCall(), b.sliceCpuPerCall()));
      out.put(FULL + " - " + other, pairedLines("cycles", figures));
    }
    var routed = (PairedOpenLoop.Result) rows.get(ROUTED);
    if (full != null && routed != null) {
      line(
          "%s minus %s, paired by cycle (us; median of the differences, its 95%% interval, and the cycles where"
              + " %s was lower):",
          ROUTED, FULL, ROUTED);
      Map<String, Paired> figures = new LinkedHashMap<>();
      figures.put("CO p50", Paired.of(routed.sliceCorrectedP50(), full.sliceCorrectedP50()));
      figures.put("CO p99", Paired.of(routed.sliceCorrectedP99(), full.sliceCorrectedP99()));
      figures.put("cpu/call", Paired.of(routed.sliceCpuPerCall(), full.sliceCpuPerCall()));
      out.put(ROUTED + " - " + FULL, pairedLines("cycles", figures));
    }
    line("");
    if (!out.isEmpty()) {
      json.put("open_loop_" + rate + "_paired", out);
    }
  }

  /** One line per paired figure (those with enough pairs), naming the pairs {@code unit}; the same as JSON. */
  private Map<String, Object> pairedLines(String unit, Map<String, Paired> figures) {
    Map<String, Object> json = new LinkedHashMap<>();
    figures.forEach(
        (what, paired) -> {
          if (paired != null) {
            line("  %-9s %s", what, paired.describe(unit));
            json.put(what, paired.toJson());
          }
        });
    return json;
  }

  private void alternatingTarget(String what, Paired paired) {
    String name =
        "Sparkgate full adds <= nginx L7's " + what + " latency (alternating, paired by bucket)";
    if (paired == null) {
      target(name, null, "too few buckets");
      return;
    }
    double[] ci = paired.confidence95();
    target(
        name,
        paired.median() <= 0,
        String.format(
            "full minus L7 %+.1f us%s, lower in %d of %d buckets",
            paired.median(),
            ci == null ? "" : String.format(" (95%% %+.1f to %+.1f)", ci[0], ci[1]),
            paired.lowerIn(),
            paired.differences().size()));
  }

  /** "min-max" of an endpoint's rounds, or "-" for a single round. */
  private String spread(String scenario, String name) {
    return spread(rounds.getOrDefault(scenario, Map.of()).get(name));
  }

  private static String spread(List<Double> ks) {
    if (ks == null || ks.size() < 2) {
      return "-";
    }
    double min = ks.stream().mapToDouble(Double::doubleValue).min().orElse(0);
    double max = ks.stream().mapToDouble(Double::doubleValue).max().orElse(0);
    return String.format("%.0f-%.0f", min, max);
  }

  /** The median of an endpoint's closed-loop p99s over the rounds (the lower middle one of an even count). */
  private double p99(String name, LoadGenerator.ClosedLoop r) {
    List<Double> ps = closedLoopP99.get(name);
    if (ps == null || ps.isEmpty()) {
      return r.latency().p99();
    }
    List<Double> sorted = ps.stream().sorted().toList();
    return sorted.get((sorted.size() - 1) / 2);
  }

  private Map<String, Object> idleSessions(LoadGenerator.Target target, JvmProbe probe)
      throws Exception {
    log("idle sessions: " + o.idleSessions + " against " + target.name());
    JvmProbe.Sample before = probe.afterGc();
    Map<String, Object> r = new LinkedHashMap<>();
    try (LoadGenerator.IdleSessions sessions = LoadGenerator.idleSessions(target, o.idleSessions)) {
      Thread.sleep(1000);
      JvmProbe.Sample open = probe.afterGc();
      r.put("sessions", sessions.size());
      r.put("open_seconds", sessions.openSeconds);
      r.put("before", before);
      r.put("with_sessions_open", open);
      r.put("heap_bytes_per_session", (open.heapUsed() - before.heapUsed()) / sessions.size());
      r.put("rss_bytes_per_session", (open.rss() - before.rss()) / sessions.size());
      r.put("nmt_other_bytes_per_session", (open.nmtOther() - before.nmtOther()) / sessions.size());
    }
    Thread.sleep(1000);
    r.put("after_close", probe.afterGc());
    return r;
  }

  private Map<String, Object> slowReader(LoadGenerator.Target target, JvmProbe probe)
      throws Exception {
    log(
        "slow reader: "
            + (o.slowTotal >> 20)
            + " MiB at "
            + (o.slowRate >> 10)
            + " KiB/s against "
            + target.name()
            + " (about "
            + o.slowTotal / o.slowRate
            + " s)");
    AtomicReference<long[]> peaks = new AtomicReference<>(new long[] {0, 0, 0, 0});
    List<JvmProbe.Sample> samples = new ArrayList<>();
    JvmProbe.Sample baseline = probe.afterGc();
    Thread sampler =
        new Thread(
            () -> {
              int n = 0;
              while (!Thread.currentThread().isInterrupted()) {
                try {
                  JvmProbe.Sample s = probe.sample(n++ % 4 == 0);
                  synchronized (samples) {
                    samples.add(s);
                  }
                  long[] p = peaks.get();
                  p[0] = Math.max(p[0], s.heapUsed());
                  p[1] = Math.max(p[1], s.directBuffers());
                  p[2] = Math.max(p[2], s.nmtOther());
                  p[3] = Math.max(p[3], s.rss());
                  Thread.sleep(500);
                } catch (InterruptedException e) {
                  return;
                } catch (IOException e) {
                  return;
                }
              }
            },
            "memory-sampler");
    sampler.setDaemon(true);
    sampler.start();
    LoadGenerator.SlowRead read =
        LoadGenerator.slowRead(target, o.slowTotal, o.slowRate, 1 << 20, LoadGenerator.SYSTEM);
    sampler.interrupt();
    sampler.join(5000);
    long[] p = peaks.get();
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("read", read);
    r.put("baseline_after_gc", baseline);
    r.put("peak_heap_used", p[0]);
    r.put("peak_direct_buffers", p[1]);
    r.put("peak_nmt_other", p[2]);
    r.put("peak_rss", p[3]);
    r.put("samples", samples.size());
    return r;
  }

  private List<Map<String, Object>> jmh() throws Exception {
    log("JMH micro-benchmarks");
    ChainedOptionsBuilder b =
        new OptionsBuilder()
            .include("io\\.sparkgate\\..*Bench\\..*")
            .forks(1)
            .shouldFailOnError(true);
    if (o.quick) {
      b.warmupIterations(1)
          .warmupTime(TimeValue.milliseconds(500))
          .measurementIterations(2)
          .measurementTime(TimeValue.milliseconds(500));
    }
    List<Map<String, Object>> out = new ArrayList<>();
    for (RunResult r : new Runner(b.build()).run()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("benchmark", r.getParams().getBenchmark().replace("io.sparkgate.", ""));
      Map<String, String> params = new LinkedHashMap<>();
      for (String k : r.getParams().getParamsKeys()) {
        params.put(k, r.getParams().getParam(k));
      }
      m.put("params", params);
      m.put("score", r.getPrimaryResult().getScore());
      m.put("error", r.getPrimaryResult().getScoreError());
      m.put("unit", r.getPrimaryResult().getScoreUnit());
      out.add(m);
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------------
  // Report

  @SuppressWarnings("unchecked")
  private void report(Map<String, Map<String, Object>> results) {
    line("Sparkgate benchmark (%s mode), %s", o.quick ? "quick" : "full", json.get("machine"));
    line(
        "Ratios: x<name> = this endpoint's figure divided by that endpoint's; 'added' = minus direct.");
    if (o.rounds > 1) {
      line(
          "Latency and streaming: %d interleaved rounds per endpoint; each endpoint's figures are from its median"
              + " round (closed-loop p99: the median of the rounds' own), 'rounds' gives the range over all of them.",
          o.rounds);
    }
    line("");
    var closed = results.get("closed_loop");
    if (closed != null) {
      line(
          "Small ExecutePlan, closed loop, 1 caller (microseconds; cpu/call = CPU of the endpoint's processes per"
              + " call, for direct the backend's)");
      line(
          "%-15s %9s %11s %9s %11s %9s %9s %9s %9s | %8s %8s | %8s %8s %8s",
          "endpoint",
          "p50",
          "p50 rounds",
          "p99",
          "p99 rounds",
          "p99.9",
          "calls/s",
          "errors",
          "cpu/call",
          "+p50",
          "+p99",
          "p50xdir",
          "p50xTLS",
          "p50xL7");
      var cpu = cpuFigures.getOrDefault("closed_loop_us_per_call", Map.of());
      for (var e : closed.entrySet()) {
        var r = (LoadGenerator.ClosedLoop) e.getValue();
        var d = (LoadGenerator.ClosedLoop) closed.get(DIRECT);
        line(
            "%-15s %9.1f %11s %9.1f %11s %9.1f %9.0f %9d %9.1f | %8.1f %8.1f | %8s %8s %8s",
            e.getKey(),
            r.latency().p50(),
            spread("closed_loop", e.getKey()),
            p99(e.getKey(), r),
            spread(closedLoopP99.get(e.getKey())),
            r.latency().p999(),
            r.callsPerSecond(),
            r.errors(),
            cpu.getOrDefault(e.getKey(), 0.0),
            r.latency().p50() - d.latency().p50(),
            p99(e.getKey(), r) - p99(DIRECT, d),
            ratio(closed, e.getKey(), DIRECT, x -> ((LoadGenerator.ClosedLoop) x).latency().p50()),
            ratio(closed, e.getKey(), STREAM, x -> ((LoadGenerator.ClosedLoop) x).latency().p50()),
            ratio(closed, e.getKey(), L7, x -> ((LoadGenerator.ClosedLoop) x).latency().p50()));
      }
      line("");
      pairedByRound(closed);
      if (closed.containsKey(L7)) {
        var dr = (LoadGenerator.ClosedLoop) closed.get(DIRECT);
        var fr = (LoadGenerator.ClosedLoop) closed.get(FULL);
        var nr = (LoadGenerator.ClosedLoop) closed.get(L7);
        var d = dr.latency();
        var f = fr.latency();
        var n = nr.latency();
        target(
            "Sparkgate full adds <= nginx L7's p50 latency",
            f.p50() - d.p50() <= n.p50() - d.p50(),
            String.format("+%.1f us vs +%.1f us", f.p50() - d.p50(), n.p50() - d.p50()));
        double fullP99 = p99(FULL, fr) - p99(DIRECT, dr);
        double l7P99 = p99(L7, nr) - p99(DIRECT, dr);
        target(
            "Sparkgate full adds <= nginx L7's p99 latency (median of rounds)",
            fullP99 <= l7P99,
            String.format("+%.1f us vs +%.1f us", fullP99, l7P99));
      } else {
        target("Sparkgate full adds <= nginx L7's p50/p99 latency", null, "nginx L7 not run");
      }
    }
    var alternating = results.get("alternating");
    if (alternating != null) {
      reportAlternating(alternating);
    }
    for (int rate : o.rates) {
      var open = results.get("open_loop_" + rate);
      if (open != null) {
        reportOpenLoop(rate, open);
      }
    }
    for (int s : o.streams) {
      var st = results.get("streaming_" + s);
      if (st == null) {
        continue;
      }
      line(
          "Streaming ExecutePlan, %d concurrent stream(s) of %d KiB batches (MB/s, 1 MB = 10^6 bytes; cpu/GB ="
              + " CPU seconds of the endpoint's processes per GB)",
          s, o.batchBytes / 1024);
      line(
          "%-15s %9s %11s %9s %7s %8s | %8s %8s %8s",
          "endpoint",
          "MB/s",
          "MB/s rounds",
          "calls",
          "errors",
          "cpu/GB",
          "xdirect",
          "xTLS-term",
          "xL7");
      var cpu = cpuFigures.getOrDefault("streaming_" + s + "_cpu_seconds_per_gb", Map.of());
      for (var e : st.entrySet()) {
        var r = (LoadGenerator.Streaming) e.getValue();
        line(
            "%-15s %9.1f %11s %9d %7d %8.2f | %8s %8s %8s",
            e.getKey(),
            r.mbPerSecond(),
            spread("streaming_" + s, e.getKey()),
            r.calls(),
            r.errors(),
            cpu.getOrDefault(e.getKey(), 0.0),
            ratio(st, e.getKey(), DIRECT, x -> ((LoadGenerator.Streaming) x).mbPerSecond()),
            ratio(st, e.getKey(), STREAM, x -> ((LoadGenerator.Streaming) x).mbPerSecond()),
            ratio(st, e.getKey(), L7, x -> ((LoadGenerator.Streaming) x).mbPerSecond()));
      }
      line("");
      if (s >= 4) {
        double f = ((LoadGenerator.Streaming) st.get(FULL)).mbPerSecond();
        if (st.containsKey(L7)) {
          double n = ((LoadGenerator.Streaming) st.get(L7)).mbPerSecond();
          target(
              "streaming x" + s + ": Sparkgate full >= nginx L7",
              f >= n,
              String.format("%.0f vs %.0f MB/s", f, n));
        } else {
          target("streaming x" + s + ": Sparkgate full >= nginx L7", null, "nginx L7 not run");
        }
        if (st.containsKey(STREAM)) {
          double n = ((LoadGenerator.Streaming) st.get(STREAM)).mbPerSecond();
          target(
              "streaming x" + s + ": Sparkgate full >= 85% of TLS terminator",
              f >= 0.85 * n,
              String.format("%.0f vs %.0f MB/s (%.0f%%)", f, n, 100 * f / n));
        } else {
          target(
              "streaming x" + s + ": Sparkgate full >= 85% of TLS terminator",
              null,
              "nginx stream not run");
        }
      }
    }
    var saturation = results.get("saturation");
    if (saturation != null) {
      line(
          "Small ExecutePlan at saturation, %d callers each on its own connection (microseconds; 'audit dropped' ="
              + " calls whose audit record the proxy could not queue; 'lag' = milliseconds the audit file trailed the"
              + " load when it stopped)",
          Saturation.CALLERS);
      line(
          "%-15s %9s %9s %9s %9s %7s %9s %13s %8s | %8s %8s %8s",
          "endpoint",
          "calls/s",
          "p50",
          "p99",
          "p99.9",
          "errors",
          "cpu/call",
          "audit dropped",
          "lag",
          "callsxdir",
          "xTLS-term",
          "xL7");
      ToDoubleFunction<Object> calls = x -> ((Saturation.Result) x).load().callsPerSecond();
      for (var e : saturation.entrySet()) {
        var r = (Saturation.Result) e.getValue();
        line(
            "%-15s %9.0f %9.1f %9.1f %9.1f %7d %9.1f %13s %8s | %8s %8s %8s",
            e.getKey(),
            r.load().callsPerSecond(),
            r.load().latency().p50(),
            r.load().latency().p99(),
            r.load().latency().p999(),
            r.load().errors(),
            r.cpuMicrosPerCall(),
            r.auditDropped() == null ? "-" : r.auditDropped(),
            r.auditLagMillis() == null ? "-" : String.format("%.0f", r.auditLagMillis()),
            ratio(saturation, e.getKey(), DIRECT, calls),
            ratio(saturation, e.getKey(), STREAM, calls),
            ratio(saturation, e.getKey(), L7, calls));
      }
      line("");
    }
    var memory = (Map<String, Object>) json.get("memory");
    if (memory != null && memory.get("idle_sessions") instanceof Map<?, ?> idle) {
      long heap = (Long) idle.get("heap_bytes_per_session");
      long rss = (Long) idle.get("rss_bytes_per_session");
      line(
          "Idle sessions against Sparkgate full: %s open in %.1f s; per session after GC: heap %+d B, RSS %+d B,"
              + " native 'Other' %+d B",
          idle.get("sessions"),
          (Double) idle.get("open_seconds"),
          heap,
          rss,
          (Long) idle.get("nmt_other_bytes_per_session"));
      target("idle sessions: heap growth <= 100 KB each", heap <= 100_000, heap + " B/session");
      target(
          "idle sessions: RSS growth <= 100 KB each",
          rss <= 100_000,
          rss + " B/session (RSS includes" + " thread stacks, malloc arenas and the JIT)");
      line("");
    }
    if (memory != null && memory.get("slow_reader") instanceof Map<?, ?> slow) {
      var read = (LoadGenerator.SlowRead) slow.get("read");
      long heap = (Long) slow.get("peak_heap_used");
      line(
          "Slow reader against Sparkgate full: %d MiB in %.0f s (%.2f MB/s), status %s; peak heap used %d MiB, "
              + "NIO direct %d MiB, native 'Other' %d MiB, RSS %d MiB (%s samples)",
          read.bytes() >> 20,
          read.seconds(),
          read.mbPerSecond(),
          read.status(),
          heap >> 20,
          (Long) slow.get("peak_direct_buffers") >> 20,
          (Long) slow.get("peak_nmt_other") >> 20,
          (Long) slow.get("peak_rss") >> 20,
          slow.get("samples"));
      target(
          "slow reader (" + (read.bytes() >> 20) + " MiB): proxy heap < 256 MB throughout",
          heap < 256L * 1024 * 1024 && "OK".equals(read.status()),
          (heap >> 20) + " MiB peak heap used");
      line("");
    }
    var jmh = (List<Map<String, Object>>) json.get("jmh");
    if (jmh != null) {
      line("JMH micro-benchmarks (average time per operation)");
      for (Map<String, Object> m : jmh) {
        line(
            "  %-45s %-22s %12.1f ± %8.1f %s",
            m.get("benchmark"),
            m.get("params"),
            (Double) m.get("score"),
            (Double) m.get("error"),
            m.get("unit"));
      }
      line("");
    }
    Double tokenNs = jmhNanos(jmh, "bench.AuthBench.tokenVerifyCached", null, null);
    target(
        "cached token verification < 5 us",
        tokenNs == null ? null : tokenNs < 5_000,
        tokenNs == null ? "JMH not run" : String.format("%.2f us", tokenNs / 1e3));
    Double inspectNs = jmhNanos(jmh, "bench.InspectBench.inspect", "shape", "plan-10000");
    target(
        "inspection of a 10,000-node plan < 1 ms",
        inspectNs == null ? null : inspectNs < 1_000_000,
        inspectNs == null ? "JMH not run" : String.format("%.2f ms", inspectNs / 1e6));
    Double one = jmhNanos(jmh, "bench.PolicyBench.decide", "rules", "1");
    Double many = jmhNanos(jmh, "bench.PolicyBench.decide", "rules", "1000");
    // "A small constant": 1,000 rules may cost at most half a microsecond more than one rule.
    target(
        "policy evaluation flat in the number of rules (1000 rules <= 1 rule + 0.5 us)",
        one == null || many == null ? null : many - one <= 500,
        one == null || many == null
            ? "JMH not run"
            : String.format("1 rule %.2f us, 1000 rules %.2f us", one / 1e3, many / 1e3));
    reportRouting();
    line("Targets");
    for (String[] tg : targets) {
      line("  %-9s %-58s %s", tg[0], tg[1], tg[2]);
    }
    json.put(
        "targets",
        targets.stream().map(x -> Map.of("status", x[0], "target", x[1], "detail", x[2])).toList());
  }

  /** The Redis round trip and the placement footprint (issue 46), with their targets. */
  @SuppressWarnings("unchecked")
  private void reportRouting() {
    var rt = (Map<String, Map<String, Object>>) json.get("redis_round_trip");
    if (rt != null) {
      line(
          "One Redis command from the bench JVM through io.sparkgate.redis.Redis.call, one at a time (us): what a"
              + " shared quota adds to the start of an operation");
      line("%-12s %9s %9s %9s %9s", "command", "p50", "p99", "p99.9", "calls");
      rt.forEach(
          (cmd, m) ->
              line(
                  "%-12s %9.1f %9.1f %9.1f %9d",
                  cmd, m.get("p50_us"), m.get("p99_us"), m.get("p999_us"), m.get("calls")));
      line("");
    }
    var fp = (Map<String, Map<String, Object>>) json.get("placement_footprint");
    if (fp != null) {
      line(
          "Placement footprint: an in-process Sparkgate (pool of two fake backends), one Config call per new"
              + " session; heap used after full collections, before and after");
      line(
          "%-8s %9s %9s %9s %12s %14s %12s",
          "store",
          "sessions",
          "errors",
          "seconds",
          "MB per 100k",
          "bytes/session",
          "Redis MB/100k");
      fp.forEach(
          (store, m) ->
              line(
                  "%-8s %9d %9d %9.1f %12.1f %14.0f %12s",
                  store,
                  m.get("sessions"),
                  m.get("errors"),
                  m.get("seconds"),
                  m.get("heap_mb_per_100k"),
                  m.get("heap_bytes_per_session"),
                  m.containsKey("redis_used_memory_mb_per_100k")
                      ? String.format("%.1f", m.get("redis_used_memory_mb_per_100k"))
                      : "-"));
      line("");
      fp.forEach(
          (store, m) -> {
            double mb = (Double) m.get("heap_mb_per_100k");
            target(
                "100,000 placed sessions <= "
                    + (int) PLACEMENT_MB_BUDGET
                    + " MB of heap ("
                    + store
                    + " store)",
                mb <= PLACEMENT_MB_BUDGET && ((Long) m.get("errors")) == 0,
                String.format("%.1f MB, %d errors", mb, m.get("errors")));
          });
    }
  }

  /** A JMH score in nanoseconds per operation, or null when that benchmark (with that parameter) did not run. */
  private static Double jmhNanos(
      List<Map<String, Object>> jmh, String benchmark, String param, String value) {
    if (jmh == null) {
      return null;
    }
    for (Map<String, Object> m : jmh) {
      @SuppressWarnings("unchecked")
      Map<String, String> params = (Map<String, String>) m.get("params");
      if (benchmark.equals(m.get("benchmark"))
          && (param == null || value.equals(params.get(param)))) {
        double score = (Double) m.get("score");
        String unit = String.valueOf(m.get("unit"));
        return unit.startsWith("ns")
            ? score
            : unit.startsWith("us")
                ? score * 1e3
                : unit.startsWith("ms") ? score * 1e6 : unit.startsWith("s/") ? score * 1e9 : null;
      }
    }
    return null;
  }

  private void target(String what, Boolean met, String detail) {
    targets.add(new String[] {met == null ? "n/a" : met ? "MET" : "NOT MET", what, detail});
  }

  private static String ratio(
      Map<String, Object> row, String name, String base, ToDoubleFunction<Object> f) {
    Object b = row.get(base);
    if (b == null) {
      return "-";
    }
    double d = f.applyAsDouble(b);
    return d == 0 ? "-" : String.format("%.2f", f.applyAsDouble(row.get(name)) / d);
  }

  private void line(String format, Object... args) {
    table.append(String.format(format, args)).append('\n');
  }

  private static void log(String s) {
    System.err.println(
        "[bench " + LocalDateTime.now().format(DateTimeFormatter.ofPattern("HH:mm:ss")) + "] " + s);
  }

  private static String machine() {
    String cpu = "?";
    try {
      cpu =
          Files.readAllLines(Path.of("/proc/cpuinfo")).stream()
              .filter(l -> l.startsWith("model name"))
              .findFirst()
              .map(l -> l.substring(l.indexOf(':') + 1).trim())
              .orElse("?");
    } catch (IOException e) {
      // not Linux
    }
    var os = ManagementFactory.getOperatingSystemMXBean();
    return String.format(
        "%d cores (%s), %d GiB RAM, Java %s, %s %s, load average %.2f at start",
        Runtime.getRuntime().availableProcessors(),
        cpu,
        ((com.sun.management.OperatingSystemMXBean) os).getTotalMemorySize() >> 30,
        System.getProperty("java.version"),
        os.getName(),
        os.getVersion(),
        os.getSystemLoadAverage());
  }

  static void sleep(Duration d) throws InterruptedException {
    TimeUnit.NANOSECONDS.sleep(d.toNanos());
  }
}
