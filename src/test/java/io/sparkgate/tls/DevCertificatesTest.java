package io.sparkgate.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.tls.DevCertificates.KeyType;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

final class DevCertificatesTest {
  @TempDir Path dir;

  @ParameterizedTest
  @EnumSource(KeyType.class)
  void generate_writes_consistent_set(KeyType type) throws Exception {
    DevCertificates.Generated g =
        DevCertificates.generate(
            dir, DevCertificates.Options.defaults().withKeyType(type).withPassword("s3cret"));

    X509Certificate ca = Pem.certificates(Files.readAllBytes(g.caCert())).get(0);
    List<X509Certificate> server = Pem.certificates(Files.readAllBytes(g.serverCert()));
    List<X509Certificate> client = Pem.certificates(Files.readAllBytes(g.clientCert()));
    assertEquals(2, server.size(), "server.pem is leaf + CA");
    assertEquals(ca, server.get(1));
    server.get(0).verify(ca.getPublicKey());
    client.get(0).verify(ca.getPublicKey());
    assertTrue(ca.getBasicConstraints() >= 0, "CA flag");
    assertEquals(type.name(), server.get(0).getPublicKey().getAlgorithm());

    Collection<List<?>> sans = server.get(0).getSubjectAlternativeNames();
    assertTrue(sans.contains(List.of(2, "localhost")), sans::toString);
    assertTrue(sans.contains(List.of(7, "127.0.0.1")), sans::toString);
    assertTrue(server.get(0).getExtendedKeyUsage().contains("1.3.6.1.5.5.7.3.1"));
    assertTrue(client.get(0).getExtendedKeyUsage().contains("1.3.6.1.5.5.7.3.2"));
    assertTrue(client.get(0).getSubjectX500Principal().getName().contains("CN=dev-user"));

    // Short-lived: the default 30 days, from a start five minutes back for clock skew.
    assertEquals(
        Duration.ofDays(30).plusMinutes(5),
        Duration.between(
            server.get(0).getNotBefore().toInstant(), server.get(0).getNotAfter().toInstant()),
        "short-lived");

    PrivateKey serverKey = Pem.pkcs8PrivateKey(Files.readAllBytes(g.serverKey()));
    assertTrue(IdentityReloader.matches(serverKey, server.get(0)));
    assertTrue(Files.readString(g.serverKey()).startsWith("-----BEGIN PRIVATE KEY-----"));

    KeyStore trust = KeyStore.getInstance("PKCS12");
    try (var in = Files.newInputStream(g.trustStore())) {
      trust.load(in, "s3cret".toCharArray());
    }
    assertEquals(ca, trust.getCertificate(trust.aliases().nextElement()));
    KeyStore clientStore = KeyStore.getInstance("PKCS12");
    try (var in = Files.newInputStream(g.clientKeyStore())) {
      clientStore.load(in, "s3cret".toCharArray());
    }
    assertTrue(clientStore.isKeyEntry("client"));
    assertEquals(client.get(0), clientStore.getCertificate("client"));

    if (FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
      for (Path secret : List.of(g.caKey(), g.serverKey(), g.clientKey(), g.clientKeyStore())) {
        assertEquals(
            "rw-------",
            PosixFilePermissions.toString(Files.getPosixFilePermissions(secret)),
            secret::toString);
      }
    }
  }

  @Test
  void client_san_email_or_uri() throws Exception {
    DevCertificates.Authority ca =
        DevCertificates.Authority.create("Test CA", KeyType.EC, Duration.ofDays(1));
    X509Certificate email =
        ca.issueClient("alice", "alice@example.com", KeyType.EC, Duration.ofDays(1)).certificate();
    X509Certificate uri =
        ca.issueClient("bob", "spiffe://dev/bob", KeyType.EC, Duration.ofDays(1)).certificate();
    assertTrue(email.getSubjectAlternativeNames().contains(List.of(1, "alice@example.com")));
    assertTrue(uri.getSubjectAlternativeNames().contains(List.of(6, "spiffe://dev/bob")));
  }

  @Test
  void reissue_from_the_written_ca_gets_new_serial() throws Exception {
    DevCertificates.Generated g = DevCertificates.generate(dir, DevCertificates.Options.defaults());
    X509Certificate first = Pem.certificates(Files.readAllBytes(g.serverCert())).get(0);
    DevCertificates.Authority ca = TlsTestSupport.authority(g);
    DevCertificates.Issued second = ca.issueServer(KeyType.RSA, Duration.ofDays(1));
    assertNotEquals(first.getSerialNumber(), second.certificate().getSerialNumber());
    second.certificate().verify(ca.certificate().getPublicKey());
  }
}
