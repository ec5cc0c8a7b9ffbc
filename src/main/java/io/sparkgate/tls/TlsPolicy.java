package io.sparkgate.tls;

import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SupportedCipherSuiteFilter;
import java.util.List;

/**
 * The protocol versions and cipher suites every Sparkgate listener (gRPC and admin) offers: TLS 1.2 and 1.3
 * only (RFC 8996 retires 1.0 and 1.1), and for TLS 1.2 only forward-secret ECDHE key exchange with an AEAD
 * cipher, the set RFC 9113 (HTTP/2) and Mozilla's "intermediate" profile agree on. Not configurable: there
 * is no client of Spark Connect that needs less.
 */
public final class TlsPolicy {
  private TlsPolicy() {}

  public static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

  /** TLS 1.3's suites first (always on in BoringSSL), then TLS 1.2's, strongest first. */
  public static final List<String> CIPHERS =
      List.of(
          "TLS_AES_128_GCM_SHA256",
          "TLS_AES_256_GCM_SHA384",
          "TLS_CHACHA20_POLY1305_SHA256",
          "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
          "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
          "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
          "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
          "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
          "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");

  /** Restricts {@code builder} to {@link #PROTOCOLS} and the {@link #CIPHERS} its provider supports. */
  public static SslContextBuilder apply(SslContextBuilder builder) {
    return builder.protocols(PROTOCOLS).ciphers(CIPHERS, SupportedCipherSuiteFilter.INSTANCE);
  }
}
