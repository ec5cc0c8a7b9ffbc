package io.sparkgate.e2e;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;

/**
 * Trust for the real Spark JVM client, which has no trust option of its own: with {@code use_ssl=true} its
 * shaded gRPC uses the JDK default trust managers, i.e. {@code javax.net.ssl.trustStore}.
 *
 * <p>Checked with the 4.0.0 client: the properties are read again for every new SparkSession (each builds a new
 * channel and SslContext), not once per JVM, so setting them in {@code @BeforeAll}, after other sessions or failed
 * TLS attempts, works, and a later class can switch to another trust store. They are JVM-wide, so ITs run one
 * class at a time (failsafe forkCount=1, no parallel execution).
 */
final class ClientTrust {

  static final String PASSWORD = "changeit";

  private ClientTrust() {}

  /** Writes a PKCS12 trust store holding exactly these certificates (e.g. the test CA) and returns its path. */
  static Path writeTrustStore(Path file, X509Certificate... trusted) {
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      for (int i = 0; i < trusted.length; i++) {
        store.setCertificateEntry("trusted-" + i, trusted[i]);
      }
      Files.createDirectories(file.toAbsolutePath().getParent());
      try (OutputStream out = Files.newOutputStream(file)) {
        store.store(out, PASSWORD.toCharArray());
      }
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("Cannot write trust store " + file, e);
    }
  }

  /** Makes TLS clients created from now on in this JVM trust only the given store. */
  static void useTrustStore(Path trustStore) {
    System.setProperty("javax.net.ssl.trustStore", trustStore.toAbsolutePath().toString());
    System.setProperty("javax.net.ssl.trustStorePassword", PASSWORD);
    System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
  }
}
