package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.sparkgate.Sparkgate;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.DebianPackages;
import io.sparkgate.tls.DevCertificates;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Sparkgate reaching the shared real Spark Connect server through a real TLS terminator: nginx's stream
 * module, which requires a client certificate (mutual TLS) and passes the bytes on to Spark in plaintext. The
 * real JVM client's query comes back right through proxy, TLS and Spark; a backend certificate from another
 * CA, or for another name, or a proxy without a client certificate, fails the call with UNAVAILABLE and
 * nginx never opens a connection to Spark for it; a renewed CA file is picked up without a restart.
 *
 * <p>Each case has its own nginx port (its access log names the port and whether Spark was reached) and its
 * own in-process proxy; one nginx, one Spark server (the suite's).
 */
@ExtendWith(SparkServerExtension.class)
class BackendTlsIT {
  private static final Path MODULE = Path.of("/usr/lib/nginx/modules/ngx_stream_module.so");

  private static Path dir;
  private static DevCertificates.Generated certs;
  private static Process nginx;
  private static final List<AutoCloseable> closing = new ArrayList<>();

  /** nginx ports: each serves the certificate of {@code certs}' CA for localhost, except {@link #renewed}. */
  private static int good;

  private static int wrongCa;
  private static int wrongName;
  private static int noClientCertificate;

  /** Serves a certificate from a CA the proxy learns of only when its CA file is renewed. */
  private static int renewed;

  private static Path renewedCaCert;

  @BeforeAll
  static void start(SparkConnectServerProcess spark) throws Exception {
    String binary =
        DebianPackages.require(
            "nginx",
            "BackendTlsIT's TLS terminator in front of Spark",
            () -> DebianPackages.firstWorking(List.of("/usr/sbin/nginx", "nginx"), "-v"));
    DebianPackages.require(
        "libnginx-mod-stream",
        "nginx's stream module, for BackendTlsIT",
        () -> Files.isRegularFile(MODULE) ? MODULE : null);

    dir = ProxyConfigs.freshDir("backend-tls");
    certs = DevCertificates.generate(dir.resolve("certs"), DevCertificates.Options.defaults());
    DevCertificates.Authority renewedCa =
        DevCertificates.Authority.create(
            "Renewed CA", DevCertificates.KeyType.RSA, Duration.ofDays(1));
    renewedCaCert = dir.resolve("certs/renewed-ca.pem");
    renewedCa.writePem(renewedCaCert, dir.resolve("certs/renewed-ca.key"));
    Path renewedCert = dir.resolve("certs/renewed-server.pem");
    Path renewedKey = dir.resolve("certs/renewed-server.key");
    renewedCa
        .issueServer(DevCertificates.KeyType.RSA, Duration.ofDays(1))
        .writePem(renewedCert, renewedKey);

    good = freePort();
    wrongCa = freePort();
    wrongName = freePort();
    noClientCertificate = freePort();
    renewed = freePort();
    StringBuilder servers = new StringBuilder();
    for (int port : new int[] {good, wrongCa, wrongName, noClientCertificate}) {
      servers.append(server(port, certs.serverCert(), certs.serverKey(), spark.port()));
    }
    servers.append(server(renewed, renewedCert, renewedKey, spark.port()));
    Path conf = dir.resolve("nginx.conf");
    Files.writeString(
        conf,
        String.join(
            "\n",
            "load_module " + MODULE + ";",
            // As root, nginx's workers would otherwise drop to nobody, who cannot read the 0600
            // keys.
            "user " + System.getProperty("user.name") + ";",
            "daemon off;",
            "pid " + dir.resolve("nginx.pid") + ";",
            "error_log " + dir.resolve("nginx-error.log") + " info;",
            "events { worker_connections 64; }",
            "stream {",
            "  log_format sparkgate '$server_port $status spark=$upstream_addr';",
            "  access_log " + access() + " sparkgate;",
            servers + "}",
            ""));
    nginx =
        new ProcessBuilder(
                binary,
                "-p",
                dir.toString(),
                "-c",
                conf.toString(),
                "-e",
                dir.resolve("nginx-error.log").toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("nginx.out").toFile())
            .start();
    for (int port : new int[] {good, wrongCa, wrongName, noClientCertificate, renewed}) {
      Await.until("nginx accepting on " + port, () -> nginx.isAlive() && accepting(port));
    }
  }

  /** One TLS server: gRPC needs ALPN h2, which nginx's stream module offers only when told. */
  private static String server(int port, Path cert, Path key, int sparkPort) {
    return String.join(
        "\n",
        "  server {",
        "    listen 127.0.0.1:" + port + " ssl;",
        "    ssl_certificate " + cert + ";",
        "    ssl_certificate_key " + key + ";",
        "    ssl_protocols TLSv1.2 TLSv1.3;",
        "    ssl_alpn h2;",
        "    ssl_verify_client on;",
        "    ssl_client_certificate " + certs.caCert() + ";",
        "    proxy_pass 127.0.0.1:" + sparkPort + ";",
        "  }",
        "");
  }

  @AfterAll
  static void stop() throws Exception {
    for (AutoCloseable c : closing) c.close();
    if (nginx != null) {
      nginx.destroy(); // SIGTERM: nginx's fast shutdown
      if (!nginx.waitFor(10, TimeUnit.SECONDS)) nginx.destroyForcibly();
    }
  }

  private static Path access() {
    return dir.resolve("nginx-access.log");
  }

  /**
   * A proxy (plaintext listener) whose backend is nginx's {@code port}, with {@code tls} as written; health
   * checked often, so that a backend that comes good is routed to again at once.
   */
  private static Sparkgate proxy(String name, int port, String tls) throws IOException {
    Path proxyDir = Files.createDirectories(dir.resolve(name));
    Sparkgate proxy =
        Sparkgate.start(
            ProxyConfigs.write(
                proxyDir,
                ProxyConfigs.PLAINTEXT_LISTENER,
                "backend: {address: '127.0.0.1:"
                    + port
                    + "', handshake_timeout: 5s, tls: "
                    + tls
                    + "}",
                "health: {interval: 200ms}"));
    closing.add(proxy);
    return proxy;
  }

  private static String tls(Path ca, String more) {
    return "{ca_file: '"
        + ca
        + "', cert_file: '"
        + certs.clientCert()
        + "', key_file: '"
        + certs.clientKey()
        + "'"
        + more
        + "}";
  }

  @Test
  void jvmClientsQuery_throughVerifiedMutualTls_returnsSparksRows() throws Exception {
    Sparkgate proxy = proxy("good", good, tls(certs.caCert(), ", server_name: localhost"));
    SparkSession spark = SparkClients.connect("sc://127.0.0.1:" + proxy.port());
    try {
      List<Row> rows = spark.sql("SELECT id, id * 2 AS twice FROM range(5)").collectAsList();
      assertEquals(5, rows.size());
      for (int i = 0; i < 5; i++) {
        assertEquals((long) i, rows.get(i).getLong(0));
        assertEquals(2L * i, rows.get(i).getLong(1));
      }
    } finally {
      spark.close();
    }
  }

  @Test
  void backendCertificateFromAnotherCa_isRefused_andNothingReachesSpark() throws Exception {
    Sparkgate proxy = proxy("wrong-ca", wrongCa, tls(renewedCaCert, ""));
    assertUnavailable(proxy);
    assertSparkNeverReachedThrough(wrongCa);
  }

  @Test
  void backendCertificateForAnotherName_isRefused_andNothingReachesSpark() throws Exception {
    Sparkgate proxy =
        proxy("wrong-name", wrongName, tls(certs.caCert(), ", server_name: spark.example.com"));
    assertUnavailable(proxy);
    assertSparkNeverReachedThrough(wrongName);
  }

  @Test
  void withoutItsClientCertificate_theProxyIsRefusedByTheBackend() throws Exception {
    Sparkgate proxy =
        proxy("no-client-certificate", noClientCertificate, "{ca_file: '" + certs.caCert() + "'}");
    assertUnavailable(proxy);
    assertSparkNeverReachedThrough(noClientCertificate);
  }

  @Test
  void renewedCaFile_isPickedUpWithoutARestart() throws Exception {
    Path ca = dir.resolve("rotating-ca.pem");
    Files.copy(certs.caCert(), ca);
    Sparkgate proxy = proxy("renewed", renewed, tls(ca, ", reload_interval: 100ms"));
    assertUnavailable(proxy);

    Path next = dir.resolve("rotating-ca.pem.new");
    Files.copy(renewedCaCert, next);
    Files.move(next, ca, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    ManagedChannel channel = Channels.plaintext(proxy.port()).build();
    try {
      Await.until(
          "a query through the renewed trust",
          () -> {
            try {
              return new ConnectRequests(channel, "renewed")
                  .sql("SELECT 42L")
                  .equals(List.of(List.of(42L)));
            } catch (StatusRuntimeException e) {
              return false; // the old connection attempt's backoff, or the file not yet re-read
            }
          });
    } finally {
      channel.shutdownNow();
    }
  }

  private static void assertUnavailable(Sparkgate proxy) {
    ManagedChannel channel = Channels.plaintext(proxy.port()).build();
    try {
      Status status =
          assertThrows(
                  StatusRuntimeException.class,
                  () -> new ConnectRequests(channel, "refused").sql("SELECT 1"))
              .getStatus();
      assertEquals(Status.Code.UNAVAILABLE, status.getCode(), status.toString());
    } finally {
      channel.shutdownNow();
    }
  }

  /**
   * nginx logged refused sessions on {@code port} beyond the start-up probe's, and opened none of them to
   * Spark. (Each proxy's health checks and the test's call all tried; each was refused.)
   */
  private static void assertSparkNeverReachedThrough(int port) throws Exception {
    List<String> lines =
        Await.value(
            "nginx's log of the refused TLS sessions on " + port,
            () -> logged(port),
            l -> l.size() > 1); // the first is the start-up probe's connection
    for (String line : lines) {
      assertTrue(
          line.endsWith("spark=-"), "nginx connected to Spark for a refused session: " + line);
    }
  }

  private static List<String> logged(int port) throws IOException {
    if (!Files.exists(access())) return List.of();
    return Files.readAllLines(access()).stream().filter(l -> l.startsWith(port + " ")).toList();
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static boolean accepting(int port) {
    try {
      new Socket(InetAddress.getLoopbackAddress(), port).close();
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
