package io.sparkgate.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.Metadata;
import io.sparkgate.call.Principal;
import io.sparkgate.testing.FakeTime;
import java.lang.reflect.Proxy;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Static tokens, client certificates and anonymous access, and the order they are tried in. */
final class OtherMethodsTest {
  @TempDir Path dir;

  private static final String ALICE_TOKEN = "alice-static-token-0123456789";
  private static final String STATIC =
      "  static_tokens:\n    - sha256: "
          + Hashes.sha256Hex(ALICE_TOKEN)
          + "\n"
          + "      principal: alice\n      groups: [etl]\n      tenant: acme\n";

  private Authenticator auth(String body) throws Exception {
    AuthFixture fx = new AuthFixture(dir);
    Files.writeString(dir.resolve("ca.pem"), "x");
    return fx.authenticator(fx.config(body));
  }

  @Test
  void staticToken_known_principal() throws Exception {
    Principal p = auth(STATIC).authenticate(AuthFixture.bearer(ALICE_TOKEN), null, null);
    assertEquals("alice", p.name());
    assertEquals(List.of("etl"), p.groups());
    assertEquals(Optional.of("acme"), p.tenant());
    assertEquals(Principal.Method.STATIC_TOKEN, p.method());
  }

  @Test
  void staticToken_unknown_refused() throws Exception {
    Authenticator a = auth(STATIC);
    AuthFailure e =
        assertThrows(
            AuthFailure.class, () -> a.authenticate(AuthFixture.bearer("guess"), null, null));
    assertEquals(AuthFailure.Reason.UNKNOWN_TOKEN, e.reason());
  }

  @Test
  void staticAndJwt_jwtReasonWinsForJwtShapedTokens() throws Exception {
    AuthFixture fx = new AuthFixture(dir);
    Authenticator a =
        fx.authenticator(
            fx.config(STATIC + AuthFixture.JWT_FILE + "  methods: [static_tokens, jwt]\n"));
    assertEquals("alice", a.authenticate(AuthFixture.bearer(ALICE_TOKEN), null, null).name());
    assertEquals(
        Principal.Method.JWT, a.authenticate(AuthFixture.bearer(fx.token()), null, null).method());
    String forged = AuthFixture.sign(AuthFixture.k2(), "k1", fx.claims().build());
    AuthFailure e =
        assertThrows(
            AuthFailure.class, () -> a.authenticate(AuthFixture.bearer(forged), null, null));
    assertEquals(AuthFailure.Reason.BAD_SIGNATURE, e.reason());
  }

  @Test
  void clientCert_cn_and_san() throws Exception {
    X509Certificate cert = cert("CN=alice,OU=data,O=Acme", "alice@acme.test");
    Principal byCn =
        new ClientCertIdentity(new io.sparkgate.config.AuthConfig.ClientCert("cn"))
            .authenticate(cert);
    assertEquals("alice", byCn.name());
    assertEquals(Optional.of(cert.getSubjectX500Principal().getName()), byCn.clientCertSubject());
    Principal bySan =
        new ClientCertIdentity(new io.sparkgate.config.AuthConfig.ClientCert("san"))
            .authenticate(cert);
    assertEquals("alice@acme.test", bySan.name());
    assertEquals(Principal.Method.CLIENT_CERT, bySan.method());
    AuthFailure noSan =
        assertThrows(
            AuthFailure.class,
            () ->
                new ClientCertIdentity(new io.sparkgate.config.AuthConfig.ClientCert("san"))
                    .authenticate(cert("CN=bob", null)));
    assertEquals(AuthFailure.Reason.BAD_CLIENT_CERT, noSan.reason());
  }

  @Test
  void clientCert_fromTlsSession_elseAnonymous() throws Exception {
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(dir.resolve("s.pem"), "x");
    Files.writeString(dir.resolve("ca.pem"), "x");
    Files.setPosixFilePermissions(
        dir.resolve("s.pem"), java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    Files.writeString(
        file,
        "listen: {address: 127.0.0.1}\n"
            + "tls:\n  cert_file: s.pem\n  key_file: s.pem\n  client_ca_file: ca.pem\n"
            + "backend:\n  address: localhost:15002\nauth:\n  client_cert: {}\n  anonymous: fallback\n");
    var config = io.sparkgate.config.ProxyConfig.load(file).auth();
    FakeTime time = new FakeTime();
    Authenticator a = new Authenticator(config, List.of(), time, time);
    assertEquals(
        "alice", a.authenticate(new Metadata(), session(cert("CN=alice", null)), null).name());
    assertEquals(
        Principal.Method.ANONYMOUS, a.authenticate(new Metadata(), session(null), null).method());
    assertEquals(Principal.Method.ANONYMOUS, a.authenticate(new Metadata(), null, null).method());
  }

  /** An SSLSession whose peer presented this certificate, or none (with the session's value store). */
  private static SSLSession session(X509Certificate cert) {
    Map<String, Object> values = new HashMap<>();
    return (SSLSession)
        Proxy.newProxyInstance(
            SSLSession.class.getClassLoader(),
            new Class<?>[] {SSLSession.class},
            (proxy, method, args) -> {
              if (method.getName().equals("getValue")) {
                return values.get((String) args[0]);
              }
              if (method.getName().equals("putValue")) {
                values.put((String) args[0], args[1]);
                return null;
              }
              if (method.getName().equals("getPeerCertificates")) {
                if (cert == null) {
                  throw new SSLPeerUnverifiedException("no client certificate");
                }
                return new Certificate[] {cert};
              }
              throw new UnsupportedOperationException(method.getName());
            });
  }

  private static X509Certificate cert(String subject, String email) throws Exception {
    KeyPair pair = KeyPairGenerator.getInstance("EC").generateKeyPair();
    X500Name name = new X500Name(subject);
    long now = System.currentTimeMillis();
    JcaX509v3CertificateBuilder b =
        new JcaX509v3CertificateBuilder(
            name,
            BigInteger.ONE,
            new Date(now - 60_000),
            new Date(now + 3_600_000),
            name,
            pair.getPublic());
    if (email != null) {
      b.addExtension(
          Extension.subjectAlternativeName,
          false,
          new GeneralNames(new GeneralName(GeneralName.rfc822Name, email)));
    }
    return new JcaX509CertificateConverter()
        .getCertificate(
            b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(pair.getPrivate())));
  }
}
