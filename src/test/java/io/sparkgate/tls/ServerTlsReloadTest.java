package io.sparkgate.tls;

import static io.sparkgate.tls.TlsTestSupport.RELOAD;
import static io.sparkgate.tls.TlsTestSupport.channel;
import static io.sparkgate.tls.TlsTestSupport.check;
import static io.sparkgate.tls.TlsTestSupport.clientContext;
import static io.sparkgate.tls.TlsTestSupport.handshake;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslProvider;
import io.sparkgate.testing.Await;
import io.sparkgate.tls.DevCertificates.KeyType;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyPairGenerator;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.LoggerFactory;

/** Certificates replaced on disk reach new connections; open connections and bad files are handled. */
final class ServerTlsReloadTest {
  private static final Duration WAIT = Duration.ofSeconds(15);

  @TempDir Path dir;
  private ServerTls tls;
  private Server server;
  private final List<ManagedChannel> channels = new CopyOnWriteArrayList<>();
  private final Capture logs = new Capture();

  @AfterEach
  void tearDown() throws Exception {
    for (ManagedChannel c : channels) {
      c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    TlsTestSupport.stop(server);
    if (tls != null) {
      tls.close();
    }
    logs.detach();
  }

  private ManagedChannel open(SslContext client) {
    ManagedChannel c = channel(server, client);
    channels.add(c);
    return c;
  }

  /**
   * A new connection from a new client context: a shared context would resume its cached TLS session,
   * and a resumed session reports the certificate of the original handshake, not the current one.
   */
  private BigInteger serialOfNewConnection(Path ca) {
    try {
      TlsTestSupport.Handshake h = handshake(server.getPort(), clientContext(ca, "TLSv1.3"));
      return h.success() ? h.serverSerial() : null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = SslProvider.class,
      names = {"OPENSSL", "JDK"})
  void reload_rotated_server_certificate_reaches_new_connections_only(SslProvider provider)
      throws Exception {
    DevCertificates.Generated certs =
        DevCertificates.generate(dir, DevCertificates.Options.defaults());
    tls = ServerTls.load(certs.serverCert(), certs.serverKey(), null, RELOAD, provider);
    server = TlsTestSupport.startServer(tls);
    SslContext client = clientContext(certs.caCert(), "TLSv1.3");

    ManagedChannel before = open(client);
    TlsTestSupport.CallResult first = check(before);
    BigInteger original = first.serverSerial();
    assertEquals(
        Pem.certificates(Files.readAllBytes(certs.serverCert())).get(0).getNotAfter().toInstant(),
        tls.certificateNotAfter(),
        "the served leaf's expiry");

    DevCertificates.Issued rotated =
        TlsTestSupport.authority(certs).issueServer(KeyType.RSA, Duration.ofDays(1));
    BigInteger next = rotated.certificate().getSerialNumber();
    assertNotEquals(original, next);
    rotated.writePem(certs.serverCert(), certs.serverKey());

    Await.until(
        "new connections to present serial " + next.toString(16),
        WAIT,
        () -> next.equals(serialOfNewConnection(certs.caCert())));
    assertEquals(
        rotated.certificate().getNotAfter().toInstant(),
        tls.certificateNotAfter(),
        "the expiry shown to metrics follows the reload (30 days before, 1 day now)");

    // The connection opened before the rotation still carries calls, on its original session.
    TlsTestSupport.CallResult old = check(before);
    assertEquals(ServingStatus.SERVING, old.status());
    assertEquals(original, old.serverSerial());
    assertEquals(
        first.clientAddress(), old.clientAddress(), "same connection as before the rotation");

    TlsTestSupport.CallResult fresh = check(open(clientContext(certs.caCert(), "TLSv1.3")));
    assertEquals(ServingStatus.SERVING, fresh.status());
    assertEquals(next, fresh.serverSerial());
  }

  @Test
  void reload_bad_files_keep_last_good_material_and_warn_without_key_material() throws Exception {
    DevCertificates.Generated certs =
        DevCertificates.generate(dir, DevCertificates.Options.defaults());
    logs.attach(IdentityReloader.class);
    tls = ServerTls.load(certs.serverCert(), certs.serverKey(), null, RELOAD);
    server = TlsTestSupport.startServer(tls);
    BigInteger original = serialOfNewConnection(certs.caCert());
    byte[] goodKey = Files.readAllBytes(certs.serverKey());

    // 1. A traditional (PKCS#1) key replaces the PKCS#8 one.
    var gen = KeyPairGenerator.getInstance("RSA");
    gen.initialize(2048);
    StringWriter pkcs1 = new StringWriter();
    try (JcaPEMWriter w = new JcaPEMWriter(pkcs1)) {
      w.writeObject(gen.generateKeyPair().getPrivate());
    }
    assertTrue(pkcs1.toString().startsWith("-----BEGIN RSA PRIVATE KEY-----"));
    replace(certs.serverKey(), pkcs1.toString().getBytes(StandardCharsets.US_ASCII));
    Await.until(
        "a warning about tls.key_file",
        WAIT,
        () ->
            logs.warnings().stream()
                .anyMatch(
                    m ->
                        m.contains(
                            "tls.key_file "
                                + certs.serverKey()
                                + ": not a PKCS#8 private key (found a traditional 'RSA PRIVATE KEY' block")));
    assertEquals(
        original, serialOfNewConnection(certs.caCert()), "last good certificate still served");

    // 2. A new certificate arrives before its key: mismatch, still the old pair.
    DevCertificates.Issued rotated =
        TlsTestSupport.authority(certs).issueServer(KeyType.RSA, Duration.ofDays(1));
    Path stagedKey = dir.resolve("staged.key");
    rotated.writePem(dir.resolve("staged.pem"), stagedKey);
    replace(certs.serverKey(), goodKey); // back to the loaded pair: nothing to do, nothing to warn
    replace(certs.serverCert(), Files.readAllBytes(dir.resolve("staged.pem")));
    Await.until(
        "a key/certificate mismatch warning",
        WAIT,
        () -> logs.warnings().stream().anyMatch(m -> m.contains("does not match")));
    assertEquals(original, serialOfNewConnection(certs.caCert()));

    // 3. The matching key lands: the new pair is taken.
    replace(certs.serverKey(), Files.readAllBytes(stagedKey));
    BigInteger next = rotated.certificate().getSerialNumber();
    Await.until(
        "the rotated certificate", WAIT, () -> next.equals(serialOfNewConnection(certs.caCert())));

    // Each bad state warned once (not once per 200 ms poll), and no key material reached the log.
    assertEquals(2, logs.warnings().size(), logs.warnings()::toString);
    String body = pkcs1.toString().lines().skip(1).findFirst().orElseThrow();
    String secret = Files.readString(stagedKey).lines().skip(1).findFirst().orElseThrow();
    for (String m : logs.all()) {
      assertFalse(m.contains(body) || m.contains(secret) || m.contains("-----BEGIN"), m);
    }
  }

  @Test
  void reload_rotated_client_ca_changes_which_clients_are_accepted() throws Exception {
    DevCertificates.Generated certs =
        DevCertificates.generate(dir, DevCertificates.Options.defaults());
    Path clientCa = dir.resolve("client-ca.pem");
    Files.copy(certs.caCert(), clientCa);
    tls = ServerTls.load(certs.serverCert(), certs.serverKey(), clientCa, RELOAD);
    server = TlsTestSupport.startServer(tls);

    DevCertificates.Authority newCa =
        DevCertificates.Authority.create("New Client CA", KeyType.EC, Duration.ofDays(1));
    newCa
        .issueClient("alice", "spiffe://dev/alice", KeyType.EC, Duration.ofDays(1))
        .writePem(dir.resolve("alice.pem"), dir.resolve("alice.key"));
    // Fresh client contexts per connection (no session resumption; see serialOfNewConnection).
    Callable<SslContext> oldClient =
        () ->
            clientContext(
                certs.caCert(),
                "TLSv1.3",
                certs.clientCert(),
                certs.clientKey(),
                SslProvider.OPENSSL);
    Callable<SslContext> newClient =
        () ->
            clientContext(
                certs.caCert(),
                "TLSv1.3",
                dir.resolve("alice.pem"),
                dir.resolve("alice.key"),
                SslProvider.OPENSSL);

    ManagedChannel established = open(oldClient.call());
    assertEquals(ServingStatus.SERVING, check(established).status());
    assertThrows(StatusRuntimeException.class, () -> check(open(newClient.call())));

    newCa.writePem(dir.resolve("new-ca.pem"), dir.resolve("new-ca.key"));
    Files.move(
        dir.resolve("new-ca.pem"),
        clientCa,
        StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);

    Await.until(
        "alice's certificate to be accepted",
        WAIT,
        () -> {
          try {
            return check(open(newClient.call())).status() == ServingStatus.SERVING;
          } catch (StatusRuntimeException e) {
            return false;
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        });
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> check(open(oldClient.call())));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
    // Already authenticated connections are not re-judged.
    assertEquals(ServingStatus.SERVING, check(established).status());
  }

  /** Atomic replacement, as deployment tools do it, so no poll ever sees a half-written file. */
  private void replace(Path target, byte[] content) throws java.io.IOException {
    Path tmp = Files.createTempFile(dir, "replace", ".tmp");
    Files.write(tmp, content);
    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  /** Collects what a logger emits; thread-safe because the reload thread writes while we read. */
  private static final class Capture extends AppenderBase<ILoggingEvent> {
    private final List<ILoggingEvent> events = new CopyOnWriteArrayList<>();
    private Logger logger;

    void attach(Class<?> source) {
      logger = (Logger) LoggerFactory.getLogger(source);
      setContext(logger.getLoggerContext());
      start();
      logger.addAppender(this);
    }

    void detach() {
      if (logger != null) {
        logger.detachAppender(this);
      }
    }

    @Override
    protected void append(ILoggingEvent e) {
      events.add(e);
    }

    List<String> warnings() {
      return events.stream()
          .filter(e -> e.getLevel() == Level.WARN)
          .map(ILoggingEvent::getFormattedMessage)
          .toList();
    }

    List<String> all() {
      return events.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }
  }
}
