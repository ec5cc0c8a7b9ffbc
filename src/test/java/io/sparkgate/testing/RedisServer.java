package io.sparkgate.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real Redis (Debian's {@code redis-server}) on a free loopback port, in a directory of its own, without
 * persistence: what the session registry and shared quotas are tested against. {@link #stop()} and {@link
 * #start()} take it down and bring it back on the same port (an outage). Without the binary the test is
 * skipped, unless {@code SPARKGATE_CI=1}, which makes it a failure ({@code .ci/setup} installs it).
 */
public final class RedisServer implements AutoCloseable {
  private final String binary;
  private final Path dir;
  private final int port;
  private Process process;

  private RedisServer(String binary, Path dir, int port) {
    this.binary = binary;
    this.dir = dir;
    this.port = port;
  }

  /** Starts a fresh Redis; skips (or fails under CI) when redis-server is not installed. */
  public static RedisServer start(Path dir) throws IOException {
    String binary =
        DebianPackages.require(
            "redis-server",
            "the session registry's and shared quotas' store",
            () ->
                DebianPackages.firstWorking(
                    List.of("/usr/bin/redis-server", "redis-server"), "--version"));
    Files.createDirectories(dir);
    int port;
    try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = free.getLocalPort();
    }
    RedisServer redis = new RedisServer(binary, dir, port);
    redis.start();
    return redis;
  }

  public int port() {
    return port;
  }

  /** {@code redis://127.0.0.1:<port>/0}. */
  /** The sessions section of a replica that uses this Redis, with commands timing out after {@code timeout}. */
  public io.sparkgate.config.SessionsConfig config(java.time.Duration timeout) {
    return new io.sparkgate.config.SessionsConfig(
        io.sparkgate.config.SessionsConfig.Store.REDIS,
        java.util.Optional.of(java.net.URI.create(url())),
        java.util.Optional.empty(),
        timeout,
        java.time.Duration.ofHours(1));
  }

  public String url() {
    return "redis://127.0.0.1:" + port + "/0";
  }

  /** Starts (again) on the same port; returns once it accepts connections. */
  public synchronized void start() throws IOException {
    if (process != null && process.isAlive()) return;
    process = launch();
    try {
      Await.until("redis-server accepting on " + port, Duration.ofSeconds(30), this::accepting);
    } catch (Exception e) {
      throw new IOException("redis-server did not start; see " + dir.resolve("redis.log"), e);
    }
  }

  private Process launch() throws IOException {
    return new ProcessBuilder(
            binary,
            "--port",
            Integer.toString(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            dir.toString())
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve("redis.log").toFile())
        .start();
  }

  /** Kills it (SIGKILL: no goodbye to clients); what it held is gone. */
  public synchronized void stop() throws InterruptedException {
    if (process == null) return;
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
    process = null;
  }

  private boolean accepting() {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      s.getOutputStream().write("PING\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      byte[] reply = new byte[7];
      int n = s.getInputStream().read(reply);
      return n > 0 && reply[0] == '+';
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }
}
