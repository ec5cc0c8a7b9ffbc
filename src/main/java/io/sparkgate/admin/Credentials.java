package io.sparkgate.admin;

import io.sparkgate.config.AdminConfig;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Who is asking the admin listener: the client certificate's subject (when the listener trusts a client CA),
 * else {@code token} for the admin token, else {@code loopback} on a listener that needs no credentials.
 */
final class Credentials {
  private static final String BEARER = "Bearer ";

  private final AdminConfig config;

  Credentials(AdminConfig config) {
    this.config = config;
  }

  /**
   * The operator, or null when the request does not carry the credentials this listener needs.
   *
   * @param tls the connection's TLS session, null in plaintext
   * @param authorization the request's Authorization header, null without one
   */
  String operator(SSLSession tls, String authorization) {
    if (tls != null && config.clientCaFile().isPresent()) {
      try {
        Certificate[] chain = tls.getPeerCertificates();
        if (chain.length > 0 && chain[0] instanceof X509Certificate x) {
          return x.getSubjectX500Principal().getName();
        }
      } catch (SSLPeerUnverifiedException noCertificate) {
        // the token may still do
      }
    }
    if (config.token().isPresent()) {
      if (authorization == null
          || !authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
        return null;
      }
      byte[] sent =
          authorization.substring(BEARER.length()).strip().getBytes(StandardCharsets.UTF_8);
      byte[] expected = config.token().get().reveal().getBytes(StandardCharsets.UTF_8);
      return MessageDigest.isEqual(sent, expected) ? "token" : null;
    }
    return config.requiresCredentials() ? null : "loopback";
  }
}
