package io.sparkgate.admin;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import io.sparkgate.config.TlsConfig;
import io.sparkgate.tls.TlsPolicy;
import java.io.IOException;

/**
 * The admin listener's TLS, on Netty's own SslContext (the JDK's TLS, as no native one is on the class path):
 * the protocols and ciphers every Sparkgate listener offers ({@link TlsPolicy}), and client certificates asked
 * for but not required when {@code admin.tls} names a client CA.
 */
final class AdminTls {
  private AdminTls() {}

  static SslContext sslContext(TlsConfig tls) {
    try {
      SslContextBuilder b =
          SslContextBuilder.forServer(tls.certFile().toFile(), tls.keyFile().toFile())
              .protocols(TlsPolicy.PROTOCOLS)
              .ciphers(TlsPolicy.CIPHERS, SupportedCipherSuiteFilter.INSTANCE);
      if (tls.clientCaFile().isPresent()) {
        // Optional at the handshake: probes (the kubelet's among them) have no certificate and need
        // /healthz and /readyz; every other path then asks for one (or the token).
        b.trustManager(tls.clientCaFile().get().toFile()).clientAuth(ClientAuth.OPTIONAL);
      }
      return b.build();
    } catch (IOException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "admin.tls: cannot use "
              + tls.certFile()
              + " and "
              + tls.keyFile()
              + ": "
              + e.getMessage(),
          e);
    }
  }
}
