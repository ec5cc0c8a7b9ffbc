package io.sparkgate.tls;

import static io.sparkgate.tls.TlsTestSupport.handshake;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.grpc.Server;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslProvider;
import io.sparkgate.admin.AdminServer;
import io.sparkgate.config.AdminConfig;
import io.sparkgate.config.TlsConfig;
import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * TLS 1.2+ with ECDHE and AEAD only, on the gRPC listener (both TLS providers) and the admin listener: real
 * clients on real sockets. Refusals use a BoringSSL client, which still offers what the JDK client no longer
 * lets itself send (TLS 1.0, 1.1); acceptances use the JDK's own SSLSocket.
 */
final class TlsPolicyTest {
  @TempDir Path dir;
  private ServerTls tls;
  private Server grpc;
  private AdminServer admin;

  enum Listener {
    GRPC_OPENSSL,
    GRPC_JDK,
    ADMIN
  }

  private int start(Listener listener) throws Exception {
    DevCertificates.Generated certs =
        DevCertificates.generate(dir, DevCertificates.Options.defaults());
    if (listener == Listener.ADMIN) {
      admin =
          AdminServer.start(
              new AdminConfig(
                  true,
                  "127.0.0.1",
                  0,
                  "/metrics",
                  Optional.empty(),
                  Optional.of(
                      new TlsConfig(
                          certs.serverCert(),
                          certs.serverKey(),
                          Optional.empty(),
                          Duration.ofMinutes(1)))),
              new AdminServer.Routes());
      return admin.port();
    }
    SslProvider provider = listener == Listener.GRPC_JDK ? SslProvider.JDK : SslProvider.OPENSSL;
    tls = ServerTls.load(certs.serverCert(), certs.serverKey(), null, null, provider);
    grpc = TlsTestSupport.startServer(tls);
    return grpc.getPort();
  }

  @AfterEach
  void stop() throws Exception {
    TlsTestSupport.stop(grpc);
    if (tls != null) tls.close();
    if (admin != null) admin.close();
  }

  @ParameterizedTest
  @EnumSource(Listener.class)
  void oldProtocolsAndWeakTls12Ciphers_refused(Listener listener) throws Exception {
    int port = start(listener);
    for (String protocol : List.of("TLSv1", "TLSv1.1")) {
      TlsTestSupport.Handshake h = handshake(port, boringSsl(protocol, null));
      assertFalse(h.success(), protocol + " must not get a session");
    }
    // CBC with ECDHE, then AEAD without forward secrecy (RSA key exchange), then both weak.
    for (String cipher :
        List.of(
            "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
            "TLS_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_RSA_WITH_AES_128_CBC_SHA")) {
      TlsTestSupport.Handshake h = handshake(port, boringSsl("TLSv1.2", cipher));
      assertFalse(h.success(), cipher + " must not get a session");
    }
  }

  @ParameterizedTest
  @EnumSource(Listener.class)
  void tls12EcdheGcm_andTls13_accepted_byTheJdkClient(Listener listener) throws Exception {
    int port = start(listener);
    for (String cipher :
        List.of(
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256")) {
      try (SSLSocket s = jdkClient(port, "TLSv1.2", cipher)) {
        s.startHandshake();
        assertEquals("TLSv1.2", s.getSession().getProtocol());
        assertEquals(cipher, s.getSession().getCipherSuite());
      }
    }
    try (SSLSocket s = jdkClient(port, "TLSv1.3", null)) {
      s.startHandshake();
      assertEquals("TLSv1.3", s.getSession().getProtocol());
    }
  }

  private SslContext boringSsl(String protocol, String cipherOrNull) throws Exception {
    SslContextBuilder b =
        SslContextBuilder.forClient()
            .sslProvider(SslProvider.OPENSSL)
            .trustManager(dir.resolve("ca.pem").toFile())
            .protocols(protocol);
    if (cipherOrNull != null) b.ciphers(List.of(cipherOrNull));
    return b.build();
  }

  private SSLSocket jdkClient(int port, String protocol, String cipherOrNull) throws Exception {
    KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
    trust.load(null, null);
    try (InputStream in = new FileInputStream(dir.resolve("ca.pem").toFile())) {
      trust.setCertificateEntry(
          "ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, tmf.getTrustManagers(), null);
    SSLSocket s = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port);
    s.setSoTimeout(10_000);
    s.setEnabledProtocols(new String[] {protocol});
    if (cipherOrNull != null) s.setEnabledCipherSuites(new String[] {cipherOrNull});
    return s;
  }
}
