package io.sparkgate.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.tls.DevCertificates.KeyType;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.time.Duration;
import java.util.Base64;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Invalid files at start fail with "config.key /path: what is wrong". */
final class ServerTlsLoadTest {
  @TempDir Path dir;
  private DevCertificates.Generated certs;

  @BeforeEach
  void generate() throws Exception {
    certs = DevCertificates.generate(dir, DevCertificates.Options.defaults());
  }

  private String loadError(Path cert, Path key, Path ca) {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ServerTls.load(cert, key, ca, Duration.ofSeconds(1)).close());
    return e.getMessage();
  }

  private Path write(String name, String content) throws Exception {
    return Files.writeString(dir.resolve(name), content);
  }

  @Test
  void load_broken_key_file_names_file_and_problem() throws Exception {
    Path key = write("broken.key", "this is not a key\n");
    assertEquals(
        "tls.key_file " + key + ": not a PKCS#8 private key (no PEM 'PRIVATE KEY' block found)",
        loadError(certs.serverCert(), key, null));
  }

  @Test
  void load_pkcs1_key_explains_conversion() throws Exception {
    KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
    g.initialize(2048);
    StringWriter pem = new StringWriter();
    try (JcaPEMWriter w = new JcaPEMWriter(pem)) {
      w.writeObject(g.generateKeyPair().getPrivate());
    }
    Path key = write("pkcs1.key", pem.toString());
    String message = loadError(certs.serverCert(), key, null);
    assertTrue(
        message.startsWith(
            "tls.key_file "
                + key
                + ": not a PKCS#8 private key (found a traditional 'RSA PRIVATE KEY' block"),
        message);
    assertTrue(message.contains("openssl pkcs8 -topk8"), message);
  }

  @Test
  void load_encrypted_key_refused() throws Exception {
    Path key =
        write(
            "enc.key",
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n"
                + "-----END ENCRYPTED PRIVATE KEY-----\n");
    assertTrue(
        loadError(certs.serverCert(), key, null)
            .startsWith(
                "tls.key_file " + key + ": not a PKCS#8 private key we can use: it is encrypted"));
  }

  @Test
  void load_pkcs8_garbage_refused() throws Exception {
    Path key =
        write(
            "garbage.key",
            "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getEncoder().encodeToString(new byte[64])
                + "\n-----END PRIVATE KEY-----\n");
    assertEquals(
        "tls.key_file "
            + key
            + ": not a PKCS#8 private key of a supported type (RSA or EC required)",
        loadError(certs.serverCert(), key, null));
  }

  @Test
  void load_missing_and_empty_files() throws Exception {
    Path missing = dir.resolve("nope.pem");
    assertEquals(
        "tls.cert_file " + missing + ": file does not exist",
        loadError(missing, certs.serverKey(), null));
    Path empty = write("empty.key", "");
    assertEquals(
        "tls.key_file " + empty + ": file is empty", loadError(certs.serverCert(), empty, null));
    assertEquals(
        "tls.client_ca_file " + missing + ": file does not exist",
        loadError(certs.serverCert(), certs.serverKey(), missing));
  }

  @Test
  void load_cert_file_without_certificates() throws Exception {
    assertEquals(
        "tls.cert_file " + certs.serverKey() + ": no PEM 'CERTIFICATE' block found",
        loadError(certs.serverKey(), certs.serverKey(), null));
    Path bad = write("bad.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    assertEquals(
        "tls.cert_file " + bad + ": certificate #1 is not a valid X.509 certificate",
        loadError(bad, certs.serverKey(), null));
    Path notPem = write("ca.txt", "hello\n");
    assertEquals(
        "tls.client_ca_file " + notPem + ": no PEM 'CERTIFICATE' block found",
        loadError(certs.serverCert(), certs.serverKey(), notPem));
  }

  @Test
  void load_key_not_matching_certificate() {
    // The client key is a valid PKCS#8 key, just not the server certificate's.
    assertEquals(
        "tls.key_file "
            + certs.clientKey()
            + ": private key does not match the first "
            + "certificate in tls.cert_file "
            + certs.serverCert(),
        loadError(certs.serverCert(), certs.clientKey(), null));
  }

  @Test
  void load_ec_key_and_client_ca_succeeds() throws Exception {
    DevCertificates.Generated ec =
        DevCertificates.generate(
            dir.resolve("ec"), DevCertificates.Options.defaults().withKeyType(KeyType.EC));
    try (ServerTls tls = ServerTls.load(ec.serverCert(), ec.serverKey(), ec.caCert(), null)) {
      assertTrue(tls.sslContext().isServer());
      assertTrue(tls.sslContext().applicationProtocolNegotiator().protocols().contains("h2"));
    }
  }
}
