package io.sparkgate.auth;

import io.sparkgate.call.Principal;
import io.sparkgate.config.AuthConfig;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * A principal from the client certificate the TLS handshake verified against {@code tls.client_ca_file}.
 * Only the session's peer certificates are used: they are present only when the chain was verified.
 */
final class ClientCertIdentity {
  // RFC 5280 GeneralName tags, as returned by X509Certificate.getSubjectAlternativeNames.
  private static final int SAN_EMAIL = 1;
  private static final int SAN_DNS = 2;
  private static final int SAN_URI = 6;

  /** The session value under which {@link #leaf} keeps what it found. */
  private static final String LEAF = "io.sparkgate.auth.client-certificate";

  private final boolean fromSan;

  ClientCertIdentity(AuthConfig.ClientCert config) {
    this.fromSan = config.principalFrom().equals("san");
  }

  /** The verified leaf certificate of this TLS session, if the client presented one. */
  static Optional<X509Certificate> leaf(SSLSession session) {
    if (session == null) {
      return Optional.empty();
    }
    // Looked up once per TLS session, not once per call: without a client certificate the lookup
    // throws, and building that exception cost more than the rest of authenticating a cached token.
    if (session.getValue(LEAF) instanceof Optional<?> known) {
      @SuppressWarnings("unchecked")
      Optional<X509Certificate> leaf = (Optional<X509Certificate>) known;
      return leaf;
    }
    Optional<X509Certificate> leaf;
    try {
      var certs = session.getPeerCertificates();
      leaf =
          certs.length > 0 && certs[0] instanceof X509Certificate x
              ? Optional.of(x)
              : Optional.empty();
    } catch (SSLPeerUnverifiedException e) {
      leaf = Optional.empty();
    }
    session.putValue(LEAF, leaf);
    return leaf;
  }

  Principal authenticate(X509Certificate cert) throws AuthFailure {
    String subject = cert.getSubjectX500Principal().getName();
    String name = fromSan ? san(cert) : cn(subject);
    if (name == null || name.isBlank() || name.length() > JwtVerifier.MAX_PRINCIPAL_CHARS) {
      throw new AuthFailure(
          AuthFailure.Reason.BAD_CLIENT_CERT,
          "client certificate names no user ("
              + (fromSan ? "no email, URI or DNS subject alternative name" : "no CN")
              + ")",
          "client certificate " + subject + " names no user");
    }
    return new Principal(
        name, List.of(), Optional.empty(), Principal.Method.CLIENT_CERT, Optional.of(subject));
  }

  private static String cn(String subject) {
    try {
      List<Rdn> rdns = new LdapName(subject).getRdns();
      // LdapName indexes RDNs right to left; the leftmost CN is the most specific, the owner's
      // name.
      for (int i = rdns.size() - 1; i >= 0; i--) {
        if (rdns.get(i).getType().equalsIgnoreCase("CN")) {
          return rdns.get(i).getValue().toString();
        }
      }
      return null;
    } catch (InvalidNameException e) {
      return null;
    }
  }

  /** The first email, else URI, else DNS name: emails and SPIFFE-style URIs name people and workloads. */
  private static String san(X509Certificate cert) {
    Collection<List<?>> names;
    try {
      names = cert.getSubjectAlternativeNames();
    } catch (CertificateParsingException e) {
      return null;
    }
    if (names == null) {
      return null;
    }
    for (int type : new int[] {SAN_EMAIL, SAN_URI, SAN_DNS}) {
      for (List<?> n : names) {
        if (n.size() >= 2
            && n.get(0) instanceof Integer t
            && t == type
            && n.get(1) instanceof String s) {
          return s;
        }
      }
    }
    return null;
  }
}
