package io.sparkgate.bench;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Date;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The processes a run compares, each started as a child of the runner and stopped by it: the fake backend,
 * Sparkgate (one configuration file per variant), nginx as an L7 gRPC proxy and nginx's stream module as a
 * plain TLS terminator. Configuration files are written into the run's work directory.
 */
final class Endpoints implements AutoCloseable {
  private final Path work;
  private final List<Process> processes = new ArrayList<>();
  static final String ISSUER = "https://sparkgate-bench.invalid/issuer";
  static final String AUDIENCE = "sparkgate-bench";

  /** The features a Sparkgate variant can have besides TLS; all of them make "Sparkgate full". */
  static final Set<String> FEATURES =
      Collections.unmodifiableSet(new LinkedHashSet<>(List.of("jwt", "policy", "audit")));

  /**
   * Features a baseline may add that "full" (as the issue defines it) does not have: the Prometheus endpoint,
   * measured as full plus metrics against full.
   */
  static final Set<String> EXTRA_FEATURES = Set.of("metrics");

  /** The token each variant with JWT accepts, by name; set by {@link #sparkgateConfig}. */
  private final Map<String, String> jwtTokens = new HashMap<>();

  private Process backend;

  Endpoints(Path work) {
    this.work = work;
  }

  static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String javaBin() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  /** Where {@link #start} sends a process's output. */
  Path logFile(String name) {
    return work.resolve("logs").resolve(name + ".log");
  }

  /** A Sparkgate variant's current audit file, when its configuration has audit. */
  Path auditFile(String name) {
    return work.resolve(name).resolve("audit").resolve("audit.jsonl");
  }

  Process start(String name, List<String> command) throws IOException {
    return start(name, command, Map.of());
  }

  /** As {@link #start(String, List)}, with these variables over the runner's environment. */
  Process start(String name, List<String> command, Map<String, String> env) throws IOException {
    Path log = logFile(name);
    Files.createDirectories(log.getParent());
    ProcessBuilder pb =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().putAll(env);
    Process p = pb.start();
    processes.add(p);
    return p;
  }

  /** The fake backend in its own JVM, so that its garbage and threads are not the load generator's. */
  int startBackend() throws IOException, InterruptedException {
    int port = freePort();
    backend = startBackendProcess("backend", port);
    return port;
  }

  private Process startBackendProcess(String name, int port) throws IOException {
    return start(
        name,
        List.of(
            javaBin(),
            "-Xms512m",
            "-Xmx1g",
            "-cp",
            System.getProperty("java.class.path"),
            BenchBackend.class.getName(),
            "--port",
            Integer.toString(port)));
  }

  /** redis-server on the PATH or in /usr/bin, or null. */
  static Path redisServerBinary() {
    for (String dir :
        (System.getenv().getOrDefault("PATH", "/usr/bin") + File.pathSeparator + "/usr/bin")
            .split(File.pathSeparator)) {
      Path p = Path.of(dir, "redis-server");
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }

  /**
   * A throwaway redis-server on a free loopback port, without persistence, in the work directory; stopped with
   * the other processes. Returns its port once it answers PING.
   */
  int startRedis(Path redisServer) throws IOException, InterruptedException {
    int port = freePort();
    Path dir = work.resolve("redis");
    Files.createDirectories(dir);
    Process p =
        start(
            "redis",
            List.of(
                redisServer.toString(),
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                dir.toString()));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        throw new IllegalStateException(
            "redis-server exited with " + p.exitValue() + " (see its log)");
      }
      try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
        s.getOutputStream().write("PING\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        byte[] buf = new byte[16];
        int n = s.getInputStream().read(buf);
        if (n > 0
            && new String(buf, 0, n, java.nio.charset.StandardCharsets.US_ASCII)
                .startsWith("+PONG")) {
          return port;
        }
      } catch (IOException e) {
        // not listening yet
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("redis-server did not answer PING within 30 s");
  }

  /**
   * Routing for a variant: a pool of two members, sessions in Redis (the variant "sparkgate-routed"). The
   * members are two addresses of the bench's one backend ({@code 127.0.0.1} and {@code localhost}): two
   * channels, placements spread over both by rendezvous hashing, and a backend exactly as warm and as loaded as
   * the one every other variant calls, so the difference to "full" is the routing alone. (A second backend
   * process, tried first, was colder and competed for the two cores: routed paid for that, not for routing.)
   */
  record Routing(String redisUrl) {}

  /** The fake backend's process (null until started). */
  Process backendProcess() {
    return backend;
  }

  /** How often a Sparkgate with the policy stage re-reads the backend's profile in the bench (see sparkgateConfig). */
  static final int PROFILE_REFRESH_SECONDS = 20;

  /**
   * The JVM options deploy/ runs Sparkgate with, so that the bench measures the proxy as shipped: the parallel
   * collector and transparent huge pages for the heap and the compiled code (docs/operations.md, "JVM
   * settings"; bench/README.md, decision log, fifteenth and twenty-first rounds).
   */
  static final List<String> SHIPPED_JVM =
      List.of("-XX:+UseParallelGC", "-XX:+UseTransparentHugePages");

  /** A proxy JVM with JMX on a loopback port and native memory tracking, for the memory scenarios. */
  Process startSparkgate(
      String name,
      Path jar,
      Path config,
      int jmxPort,
      List<String> extraJvmOptions,
      Map<String, String> env)
      throws IOException {
    List<String> cmd = new ArrayList<>(List.of(javaBin(), "-XX:NativeMemoryTracking=summary"));
    cmd.addAll(jmxOptions(jmxPort));
    cmd.addAll(extraJvmOptions);
    cmd.addAll(List.of("-jar", jar.toString(), "serve", "--config", config.toString()));
    return start(name, cmd, env);
  }

  /**
   * The {@link FrameRelay} baseline in its own JVM, with JMX like Sparkgate's (its warm-up watches the JIT);
   * with a Sparkgate configuration (null: none), it also does Sparkgate's per-call work ({@link RelayFeatures}).
   */
  Process startFrameRelay(
      String name,
      int port,
      int backendPort,
      Path certs,
      int jmxPort,
      Path config,
      List<String> extraJvmOptions,
      Map<String, String> env)
      throws IOException {
    // Netty's leak detector off, as the sparkgate command sets it (forward/NettyDefaults).
    List<String> cmd =
        new ArrayList<>(
            List.of(javaBin(), "-Dio.grpc.netty.shaded.io.netty.leakDetection.level=disabled"));
    cmd.addAll(jmxOptions(jmxPort));
    cmd.addAll(extraJvmOptions);
    cmd.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            FrameRelay.class.getName(),
            "--port",
            Integer.toString(port),
            "--backend-port",
            Integer.toString(backendPort),
            "--cert",
            certs.resolve("server.pem").toString(),
            "--key",
            certs.resolve("server.key").toString()));
    if (config != null) {
      cmd.addAll(List.of("--config", config.toString()));
    }
    return start(name, cmd, env);
  }

  /** JMX on a loopback port, no authentication: for the runner's {@link JvmProbe}. */
  private static List<String> jmxOptions(int port) {
    return List.of(
        "-Dcom.sun.management.jmxremote.port=" + port,
        "-Dcom.sun.management.jmxremote.rmi.port=" + port,
        "-Dcom.sun.management.jmxremote.host=127.0.0.1",
        "-Djava.rmi.server.hostname=127.0.0.1",
        "-Dcom.sun.management.jmxremote.authenticate=false",
        "-Dcom.sun.management.jmxremote.ssl=false");
  }

  /**
   * Sparkgate's configuration for one variant: TLS, plus the features given (a subset of {@link #FEATURES}):
   * JWT authentication, the shipped policy, audit to a file; {@code audit} sets audit keys over the bench's
   * (--baseline-audit: what an audit setting costs), {@code listen} adds listen keys (--listen), and
   * {@code policy}, when not null, replaces the shipped policy (--baseline-policy: an older build's own).
   */
  Path sparkgateConfig(
      String name,
      int port,
      int backendPort,
      Path certs,
      Set<String> features,
      Map<String, String> audit,
      Map<String, String> listen,
      Path policy)
      throws IOException {
    return sparkgateConfig(name, port, backendPort, certs, features, audit, listen, policy, null);
  }

  /**
   * As above; with {@code routing} (not null), {@code pools:} of two members (see {@link Routing}) and {@code
   * sessions:} in Redis replace {@code backend:}.
   */
  /**
   * Removes top-level sections from a written configuration: a build older than a section refuses the key,
   * so a before/after run leaves it out of the baseline's file ({@code --baseline-drop limits}).
   */
  static void dropSections(Path config, List<String> sections) throws IOException {
    if (sections.isEmpty()) {
      return;
    }
    StringBuilder kept = new StringBuilder();
    boolean dropping = false;
    for (String line : Files.readAllLines(config)) {
      if (!line.isEmpty() && !Character.isWhitespace(line.charAt(0))) {
        int colon = line.indexOf(':');
        dropping = colon > 0 && sections.contains(line.substring(0, colon));
      }
      if (!dropping) {
        kept.append(line).append('\n');
      }
    }
    Files.writeString(config, kept);
  }

  Path sparkgateConfig(
      String name,
      int port,
      int backendPort,
      Path certs,
      Set<String> features,
      Map<String, String> audit,
      Map<String, String> listen,
      Path policy,
      Routing routing)
      throws IOException {
    Path dir = work.resolve(name);
    Files.createDirectories(dir);
    StringBuilder y = new StringBuilder();
    y.append(
        "# Written by the benchmark runner (bench/src/main/java/io/sparkgate/bench/Endpoints.java).\n");
    y.append("listen:\n  address: 127.0.0.1\n  port: ")
        .append(port)
        .append("\n  plaintext: false\n");
    y.append("  max_inbound_message_size: 128MiB\n  max_concurrent_streams: 10000\n");
    listen.forEach((k, v) -> y.append("  ").append(k).append(": ").append(v).append('\n'));
    // Every load comes from 127.0.0.1, and the idle-sessions run holds 1,000 connections.
    y.append("limits:\n  max_connections_per_address: 10000\n");
    y.append("tls:\n  cert_file: ").append(certs.resolve("server.pem")).append('\n');
    y.append("  key_file: ").append(certs.resolve("server.key")).append('\n');
    if (routing != null) {
      // The same profile re-read as full's, on each pool member (a pool's members share one
      // profile).
      String profile =
          features.contains("policy")
              ? ", profile: {refresh_interval: " + PROFILE_REFRESH_SECONDS + "s}"
              : "";
      y.append("pools:\n  bench:\n    backends:\n");
      for (String host : List.of("127.0.0.1", "localhost")) {
        y.append("      - {address: '")
            .append(host)
            .append(':')
            .append(backendPort)
            .append("'")
            .append(profile)
            .append("}\n");
      }
      y.append("sessions:\n  store: redis\n  redis_url: ").append(routing.redisUrl()).append('\n');
    } else {
      y.append("backend:\n  address: 127.0.0.1:").append(backendPort).append('\n');
    }
    if (routing == null && features.contains("policy")) {
      // The policy stage re-reads the backend's profile (three typed unary calls with a deadline)
      // every 5 minutes by default. The first re-read after the forwarding path is compiled trips
      // C2's type and branch speculation there (gRPC's client call code is shared by both), and the
      // hot path ran C1-compiled for about a minute: at 300 s of uptime, inside the first scenario
      // after warm-up. Re-read often, so the warm-up sees it happen and the JIT settles with it
      // (twenty-sixth round).
      y.append("  profile:\n    refresh_interval: ").append(PROFILE_REFRESH_SECONDS).append("s\n");
    }
    if (features.contains("audit")) {
      y.append("audit:\n  file: ").append(auditFile(name)).append('\n');
      // Small calls write about 3 MB of records a second: at the default 100 MiB the file rotated
      // (and a background thread compressed 100 MiB) once every half-minute or so, inside one
      // window in three and the first time only after the warm-up, where it cost a second of JIT as
      // well. At 16 MiB every window carries its share of rotation and compression, as a proxy that
      // has run for days would.
      Map<String, String> keys =
          new LinkedHashMap<>(); // in this order, so configurations diff cleanly
      keys.put("max_file_size", "16MiB");
      keys.put("fsync", "batch");
      keys.putAll(audit);
      keys.forEach((k, v) -> y.append("  ").append(k).append(": ").append(v).append('\n'));
    }
    if (features.contains("jwt")) {
      // A key pair and JWKS minted for this run, see mintJwt.
      Path jwks = dir.resolve("jwks.json");
      jwtTokens.put(name, mintJwt(jwks));
      y.append("auth:\n  methods: [jwt]\n  jwt:\n    jwks_file: ").append(jwks).append('\n');
      y.append("    issuer: ").append(ISSUER).append('\n');
      y.append("    audience: ").append(AUDIENCE).append('\n');
    } else {
      y.append("auth: {anonymous: true}\n"); // a file must say who may connect
    }
    if (features.contains("policy")) {
      Path file =
          policy != null ? policy : repoRoot().resolve("policies").resolve("shared-server.yaml");
      y.append("policy:\n  file: ").append(file).append('\n');
    }
    if (features.contains("metrics")) {
      y.append(
          "metrics:\n  address: 127.0.0.1\n  port: 0\n"); // on, and never scraped: the per-call
      // cost only
    }
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(file, y.toString());
    return file;
  }

  /** The bearer token for a variant with JWT (null until its configuration was written). */
  String jwtToken(String name) {
    return jwtTokens.get(name);
  }

  /** The repository root: the working directory of run.sh, or its parent when run from bench/. */
  static Path repoRoot() {
    Path cwd = Path.of("").toAbsolutePath();
    return Files.exists(cwd.resolve("policies").resolve("shared-server.yaml"))
        ? cwd
        : cwd.getParent();
  }

  /** A fresh RSA key, its public half as a JWKS file, and an RS256 token signed with it valid for a day. */
  static String mintJwt(Path jwksFile) throws IOException {
    try {
      RSAKey key = new RSAKeyGenerator(2048).keyID("bench-" + System.nanoTime()).generate();
      Files.writeString(jwksFile, new JWKSet(key.toPublicJWK()).toString());
      Instant now = Instant.now();
      JWTClaimsSet claims =
          new JWTClaimsSet.Builder()
              .issuer(ISSUER)
              .audience(AUDIENCE)
              .subject("bench")
              .issueTime(Date.from(now.minusSeconds(60)))
              .notBeforeTime(Date.from(now.minusSeconds(60)))
              .expirationTime(Date.from(now.plus(Duration.ofHours(11))))
              .build();
      SignedJWT jwt =
          new SignedJWT(
              new JWSHeader.Builder(JWSAlgorithm.RS256).keyID(key.getKeyID()).build(), claims);
      jwt.sign(new RSASSASigner(key));
      return jwt.serialize();
    } catch (JOSEException e) {
      throw new IllegalStateException("could not mint the benchmark JWT", e);
    }
  }

  static Path nginxBinary() {
    for (String dir :
        System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin").split(File.pathSeparator)) {
      Path p = Path.of(dir, "nginx");
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    Path sbin = Path.of("/usr/sbin/nginx");
    return Files.isExecutable(sbin) ? sbin : null;
  }

  static Path streamModule() {
    for (String p :
        List.of(
            "/usr/lib/nginx/modules/ngx_stream_module.so",
            "/usr/share/nginx/modules/ngx_stream_module.so")) {
      if (Files.exists(Path.of(p))) {
        return Path.of(p);
      }
    }
    return null;
  }

  /** nginx as a TLS-terminating L7 gRPC proxy to a keepalive upstream, tuned for this job. */
  Process startNginxL7(Path nginx, int port, int backendPort, Path certs) throws IOException {
    Path prefix = work.resolve("nginx-l7");
    String conf =
        common(prefix)
            + """
        http {
          access_log off;
          sendfile on;
          tcp_nodelay on;
          # Big messages: fewer, larger reads from the upstream and larger DATA frames to the client.
          http2_recv_buffer_size 1m;
          http2_chunk_size 16k;
          http2_max_concurrent_streams 10000;
          http2_body_preread_size 1m;
          keepalive_requests 1000000;
          keepalive_timeout 3600s;
          client_max_body_size 0;
          ssl_protocols TLSv1.2 TLSv1.3;
          ssl_session_cache shared:SSL:10m;
          ssl_session_timeout 1h;
          ssl_prefer_server_ciphers off;
          upstream spark_connect {
            server 127.0.0.1:%d;
            keepalive 256;
            keepalive_requests 1000000;
            keepalive_timeout 3600s;
          }
          server {
            listen 127.0.0.1:%d ssl http2 reuseport;
            ssl_certificate %s;
            ssl_certificate_key %s;
            location / {
              grpc_pass grpc://spark_connect;
              grpc_buffer_size 1m;
              grpc_read_timeout 3600s;
              grpc_send_timeout 3600s;
              grpc_socket_keepalive on;
            }
          }
        }
        """
                .formatted(
                    backendPort, port, certs.resolve("server.pem"), certs.resolve("server.key"));
    return startNginx("nginx-l7", nginx, prefix, conf);
  }

  /** nginx's stream module terminating TLS (ALPN h2) and relaying bytes: the practical limit. */
  Process startNginxStream(Path nginx, Path module, int port, int backendPort, Path certs)
      throws IOException {
    Path prefix = work.resolve("nginx-stream");
    String conf =
        "load_module "
            + module
            + ";\n"
            + common(prefix)
            + """
        stream {
          ssl_protocols TLSv1.2 TLSv1.3;
          ssl_session_cache shared:SSLS:10m;
          ssl_session_timeout 1h;
          upstream spark_connect {
            server 127.0.0.1:%d;
          }
          server {
            listen 127.0.0.1:%d ssl reuseport;
            ssl_certificate %s;
            ssl_certificate_key %s;
            ssl_alpn h2;
            tcp_nodelay on;
            proxy_buffer_size 256k;
            proxy_timeout 3600s;
            proxy_pass spark_connect;
          }
        }
        """
                .formatted(
                    backendPort, port, certs.resolve("server.pem"), certs.resolve("server.key"));
    return startNginx("nginx-stream", nginx, prefix, conf);
  }

  private static String common(Path prefix) {
    return """
        worker_processes auto;
        worker_rlimit_nofile 65536;
        daemon off;
        pid %1$s/nginx.pid;
        error_log %1$s/error.log warn;
        events {
          worker_connections 16384;
          multi_accept on;
        }
        """
        .formatted(prefix);
  }

  private Process startNginx(String name, Path nginx, Path prefix, String conf) throws IOException {
    Files.createDirectories(prefix.resolve("tmp"));
    // Temp paths inside the prefix, so the run never writes under /var.
    conf =
        conf.replace(
            "http {\n",
            "http {\n  client_body_temp_path %1$s/tmp/body;\n  proxy_temp_path %1$s/tmp/proxy;\n  fastcgi_temp_path %1$s/tmp/fastcgi;\n  uwsgi_temp_path %1$s/tmp/uwsgi;\n  scgi_temp_path %1$s/tmp/scgi;\n"
                .formatted(prefix));
    Path file = prefix.resolve("nginx.conf");
    Files.writeString(file, conf);
    return start(
        name,
        List.of(
            nginx.toString(),
            "-e",
            prefix.resolve("error.log").toString(),
            "-p",
            prefix.toString(),
            "-c",
            file.toString()));
  }

  @Override
  public void close() {
    for (Process p : processes) {
      p.destroy();
    }
    for (Process p : processes) {
      try {
        if (!p.waitFor(15, TimeUnit.SECONDS)) {
          p.destroyForcibly();
        }
      } catch (InterruptedException e) {
        p.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }

  static void waitReady(LoadGenerator.Target target, Process process, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    RuntimeException last = null;
    while (System.nanoTime() < deadline) {
      if (process != null && !process.isAlive()) {
        throw new IllegalStateException(
            target.name() + " exited with " + process.exitValue() + " (see its log)");
      }
      try {
        LoadGenerator.probe(target);
        return;
      } catch (RuntimeException e) {
        last = e;
        Thread.sleep(200);
      }
    }
    throw new IllegalStateException(target.name() + " did not answer within " + timeout, last);
  }
}
