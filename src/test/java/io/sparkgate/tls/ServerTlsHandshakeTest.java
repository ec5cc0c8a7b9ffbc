package io.sparkgate.tls;

import static io.sparkgate.tls.TlsTestSupport.causes;
import static io.sparkgate.tls.TlsTestSupport.channel;
import static io.sparkgate.tls.TlsTestSupport.check;
import static io.sparkgate.tls.TlsTestSupport.clientContext;
import static io.sparkgate.tls.TlsTestSupport.handshake;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslProvider;
import io.sparkgate.tls.DevCertificates.KeyType;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Server-only TLS: protocol versions, ALPN, plaintext on the TLS port, EC keys; both providers. */
final class ServerTlsHandshakeTest {
  @TempDir Path dir;
  private ServerTls tls;
  private Server server;
  private ManagedChannel channel;

  private void start(SslProvider provider, KeyType keyType) throws Exception {
    DevCertificates.Generated certs =
        DevCertificates.generate(dir, DevCertificates.Options.defaults().withKeyType(keyType));
    tls = ServerTls.load(certs.serverCert(), certs.serverKey(), null, null, provider);
    server = TlsTestSupport.startServer(tls);
  }

  private Path ca() {
    return dir.resolve("ca.pem");
  }

  @AfterEach
  void tearDown() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    TlsTestSupport.stop(server);
    if (tls != null) {
      tls.close();
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = SslProvider.class,
      names = {"OPENSSL", "JDK"})
  void handshake_tls13_negotiates_h2(SslProvider provider) throws Exception {
    start(provider, KeyType.RSA);
    TlsTestSupport.Handshake h = handshake(server.getPort(), clientContext(ca(), "TLSv1.3"));
    assertTrue(h.success(), () -> causes(h.failure()));
    assertEquals("TLSv1.3", h.protocol());
    assertEquals("h2", h.alpn());

    channel = channel(server, clientContext(ca(), "TLSv1.3"));
    TlsTestSupport.CallResult r = check(channel);
    assertEquals(ServingStatus.SERVING, r.status());
    assertEquals("TLSv1.3", r.protocol());
  }

  @ParameterizedTest
  @EnumSource(
      value = SslProvider.class,
      names = {"OPENSSL", "JDK"})
  void handshake_tls12_negotiates_h2(SslProvider provider) throws Exception {
    start(provider, KeyType.RSA);
    TlsTestSupport.Handshake h = handshake(server.getPort(), clientContext(ca(), "TLSv1.2"));
    assertTrue(h.success(), () -> causes(h.failure()));
    assertEquals("TLSv1.2", h.protocol());
    assertEquals("h2", h.alpn());

    channel = channel(server, clientContext(ca(), "TLSv1.2"));
    TlsTestSupport.CallResult r = check(channel);
    assertEquals(ServingStatus.SERVING, r.status());
    assertEquals("TLSv1.2", r.protocol());
  }

  @ParameterizedTest
  @EnumSource(
      value = SslProvider.class,
      names = {"OPENSSL", "JDK"})
  void handshake_tls11_refused(SslProvider provider) throws Exception {
    start(provider, KeyType.RSA);
    // The client is BoringSSL: the JDK client has TLSv1.1 in jdk.tls.disabledAlgorithms and would
    // fail on its own without ever asking the server.
    SslContext tls11 =
        SslContextBuilder.forClient()
            .sslProvider(SslProvider.OPENSSL)
            .trustManager(ca().toFile())
            .protocols("TLSv1.1")
            .build();
    TlsTestSupport.Handshake h = handshake(server.getPort(), tls11);
    assertFalse(h.success(), "a TLS 1.1-only client must not get a session");
    // The server answers the TLS 1.1 ClientHello with a protocol_version alert (both providers).
    assertTrue(causes(h.failure()).contains("PROTOCOL_VERSION"), () -> causes(h.failure()));

    // And the server is unharmed.
    channel = channel(server, clientContext(ca(), "TLSv1.3"));
    assertEquals(ServingStatus.SERVING, check(channel).status());
  }

  @ParameterizedTest
  @EnumSource(
      value = SslProvider.class,
      names = {"OPENSSL", "JDK"})
  void plaintext_client_unavailable_and_server_keeps_serving(SslProvider provider)
      throws Exception {
    start(provider, KeyType.RSA);
    ManagedChannel plain = TlsTestSupport.plaintextChannel(server);
    try {
      StatusRuntimeException e =
          assertThrows(
              StatusRuntimeException.class,
              () ->
                  HealthGrpc.newBlockingStub(plain)
                      .withDeadlineAfter(10, TimeUnit.SECONDS)
                      .check(HealthCheckRequest.getDefaultInstance()));
      assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e::toString);
    } finally {
      plain.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    channel = channel(server, clientContext(ca(), "TLSv1.3"));
    assertEquals(ServingStatus.SERVING, check(channel).status());
  }

  @ParameterizedTest
  @EnumSource(
      value = SslProvider.class,
      names = {"OPENSSL", "JDK"})
  void ec_key_works_with_tls13_and_tls12(SslProvider provider) throws Exception {
    start(provider, KeyType.EC);
    for (String protocol : new String[] {"TLSv1.3", "TLSv1.2"}) {
      ManagedChannel c = channel(server, clientContext(ca(), protocol));
      try {
        TlsTestSupport.CallResult r = check(c);
        assertEquals(ServingStatus.SERVING, r.status());
        assertEquals(protocol, r.protocol());
        assertEquals("EC", r.session().getPeerCertificates()[0].getPublicKey().getAlgorithm());
      } finally {
        c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }
}
