package io.sparkgate.e2e;

import io.sparkgate.testing.Await;
import io.sparkgate.testing.GoTools;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real OPA server ({@code opa run --server}) built from its Go module, on a free loopback port, watching a
 * bundle directory (a changed file is loaded at once) and writing its decision log to its output, which
 * {@link #output()} reads. Skipped without Go (failed under {@code SPARKGATE_CI=1}).
 */
final class OpaServer implements AutoCloseable {
  private final Process process;
  private final Path log;
  private final int port;

  private final String scheme;

  private OpaServer(Process process, Path log, int port, String scheme) {
    this.process = process;
    this.log = log;
    this.port = port;
    this.scheme = scheme;
  }

  /** The {@code opa} binary, built on first use. */
  static Path binary() throws IOException {
    return GoTools.install("opa");
  }

  /** Starts OPA serving {@code bundle}, logging its decisions (with their ids) to {@code dir/opa.log}. */
  static OpaServer start(Path dir, Path bundle) throws Exception {
    return start(dir, "opa.log", List.of(bundle.toString()), null);
  }

  /**
   * Starts OPA over TLS ({@code cert}, {@code key}) that requires a bearer token: {@code --authentication=token
   * --authorization=basic}, with a {@code system.authz} policy (written to {@code dir}) admitting {@code token}.
   */
  static OpaServer startTls(Path dir, Path bundle, Path cert, Path key, String token)
      throws Exception {
    Path authz =
        Files.writeString(
            Files.createDirectories(dir.resolve("authz")).resolve("authz.rego"),
            "package system.authz\n\ndefault allow := false\n\nallow if input.identity == \""
                + token
                + "\"\n");
    return start(
        dir,
        "opa-tls.log",
        List.of(
            "--tls-cert-file",
            cert.toString(),
            "--tls-private-key-file",
            key.toString(),
            "--authentication=token",
            "--authorization=basic",
            bundle.toString(),
            authz.toString()),
        "https");
  }

  private static OpaServer start(Path dir, String logName, List<String> args, String scheme)
      throws Exception {
    Path opa = binary();
    int port;
    try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = free.getLocalPort();
    }
    Path log = dir.resolve(logName);
    List<String> command =
        new java.util.ArrayList<>(
            List.of(
                opa.toString(),
                "run",
                "--server",
                "--addr",
                "127.0.0.1:" + port,
                "--watch",
                "--log-format",
                "json",
                "--set",
                "decision_logs.console=true"));
    command.addAll(args);
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    OpaServer server = new OpaServer(process, log, port, scheme == null ? "http" : scheme);
    try {
      // Listening, with the bundle loaded (before it listens): over TLS with a token, /health wants
      // both.
      Await.until(
          "OPA listens on " + port,
          () -> {
            if (!process.isAlive()) {
              throw new IllegalStateException("OPA exited: " + server.output());
            }
            try (java.net.Socket s = new java.net.Socket(InetAddress.getLoopbackAddress(), port)) {
              return true;
            } catch (IOException e) {
              return false;
            }
          });
    } catch (Exception | AssertionError e) {
      server.close();
      throw e;
    }
    return server;
  }

  /** Runs {@code opa test -v} on {@code dir}; returns its exit status and output. */
  static Result test(Path dir) throws Exception {
    Process p =
        new ProcessBuilder(binary().toString(), "test", "-v", dir.toString())
            .redirectErrorStream(true)
            .start();
    String out =
        new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    if (!p.waitFor(2, TimeUnit.MINUTES)) p.destroyForcibly();
    return new Result(p.exitValue(), out);
  }

  record Result(int status, String output) {}

  String url() {
    return scheme + "://127.0.0.1:" + port;
  }

  /** Everything OPA wrote so far: its log, decision log lines included. */
  String output() throws IOException {
    return Files.exists(log) ? Files.readString(log) : "";
  }

  /** OPA's decision log lines. */
  List<String> decisionLines() throws IOException {
    return output().lines().filter(l -> l.contains("\"decision_id\"")).toList();
  }

  @Override
  public void close() throws Exception {
    process.destroy();
    if (!process.waitFor(5, TimeUnit.SECONDS)) process.destroyForcibly();
  }

  static Duration since(long startNanos) {
    return Duration.ofNanos(System.nanoTime() - startNanos);
  }
}
