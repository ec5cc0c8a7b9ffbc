package io.sparkgate.testing;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real DNS server (Debian's {@code dnsmasq}, from package {@code dnsmasq-base}) on a free loopback port, authoritative for {@code .test}: the
 * names of a hosts file of its own and the SRV records given at start; it forwards nothing. {@link #hosts} rewrites the file
 * and has it re-read (SIGHUP), as a Kubernetes headless Service's records change when pods come and go; {@link
 * #stop()} and {@link #start()} take it down and back on the same port. Without the binary the test is
 * skipped, unless {@code SPARKGATE_CI=1} ({@code .ci/setup} installs it).
 */
public final class DnsServer implements AutoCloseable {
  private final String binary;
  private final Path dir;
  private final int port;
  private final List<String> srv;
  private Process process;

  private DnsServer(String binary, Path dir, int port, List<String> srv) {
    this.binary = binary;
    this.dir = dir;
    this.port = port;
    this.srv = srv;
  }

  /**
   * Starts dnsmasq with an empty hosts file.
   *
   * @param srv SRV records, in dnsmasq's {@code --srv-host} form: {@code _service._tcp.name,target,port}
   */
  public static DnsServer start(Path dir, String... srv) throws Exception {
    String binary =
        DebianPackages.require(
            "dnsmasq-base",
            "a real DNS server the pools found through DNS ask",
            () ->
                DebianPackages.firstWorking(List.of("/usr/sbin/dnsmasq", "dnsmasq"), "--version"));
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("hosts"), "");
    DnsServer dns = new DnsServer(binary, dir, freePort(), List.of(srv));
    dns.start();
    return dns;
  }

  /** A port free for both UDP and TCP on loopback (DNS uses both). */
  private static int freePort() throws IOException {
    for (int i = 0; i < 20; i++) {
      try (ServerSocket tcp = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        int port = tcp.getLocalPort();
        try (DatagramSocket udp = new DatagramSocket(port, InetAddress.getLoopbackAddress())) {
          return port;
        } catch (IOException e) {
          // taken for UDP: try another
        }
      }
    }
    throw new IOException("no port free for both UDP and TCP on loopback");
  }

  public int port() {
    return port;
  }

  /** {@code 127.0.0.1:<port>}, as a {@code servers} entry. */
  public String server() {
    return "127.0.0.1:" + port;
  }

  /**
   * Replaces the hosts file with {@code lines} ({@code address name}) and returns once dnsmasq has re-read it.
   */
  public synchronized void hosts(String... lines) throws Exception {
    Files.writeString(dir.resolve("hosts"), String.join("\n", lines) + "\n");
    if (process == null) return; // read when started
    int before = reads();
    new ProcessBuilder("kill", "-HUP", Long.toString(process.pid())).start().waitFor();
    Await.until(
        "dnsmasq re-reading its hosts file", Duration.ofSeconds(10), () -> reads() > before);
  }

  /** Starts (again) on the same port; returns once it has read its hosts file. */
  public synchronized void start() throws Exception {
    if (process != null && process.isAlive()) return;
    List<String> command =
        new ArrayList<>(
            List.of(
                binary,
                "--no-daemon",
                "--conf-file=/dev/null",
                "--no-resolv",
                "--no-hosts",
                "--addn-hosts=" + dir.resolve("hosts"),
                "--port=" + port,
                "--listen-address=127.0.0.1",
                "--bind-interfaces",
                "--pid-file=" + dir.resolve("dnsmasq.pid"),
                "--local-ttl=0",
                // Authoritative for .test: a name there that the hosts file lacks is NXDOMAIN, not
                // REFUSED.
                "--local=/test/"));
    // As root, dnsmasq would drop to user nobody, who may not read the hosts file here.
    if ("root".equals(System.getProperty("user.name"))) command.add("--user=root");
    for (String s : srv) command.add("--srv-host=" + s);
    int before = reads();
    process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("dnsmasq.log").toFile()))
            .start();
    Await.until(
        "dnsmasq reading its hosts file (see " + dir.resolve("dnsmasq.log") + ")",
        Duration.ofSeconds(10),
        () -> {
          if (!process.isAlive()) throw new IOException("dnsmasq exited: see its log");
          return reads() > before;
        });
  }

  private int reads() throws IOException {
    Path log = dir.resolve("dnsmasq.log");
    if (!Files.exists(log)) return 0;
    String marker = "read " + dir.resolve("hosts");
    int n = 0;
    for (String line : Files.readAllLines(log)) {
      if (line.contains(marker)) n++;
    }
    return n;
  }

  /** Stops it: queries then get no answer (the port is closed). */
  public synchronized void stop() throws InterruptedException {
    if (process == null) return;
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
    process = null;
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }
}
