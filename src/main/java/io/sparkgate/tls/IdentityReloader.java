package io.sparkgate.tls;

import io.grpc.util.AdvancedTlsX509KeyManager;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps an {@link AdvancedTlsX509KeyManager} in step with a certificate file and its key file: the listener's
 * identity, or the client certificate the proxy presents to a backend.
 *
 * <p>We schedule the re-reads ourselves instead of using the key manager's own
 * updateIdentityCredentialsFromFile(..., period, ...) because that variant enforces a one-minute
 * minimum period, only reloads when BOTH files' mtimes changed, never checks that key and certificate
 * belong together, and logs at SEVERE with a stack trace on every failed poll. The key manager is
 * still the thing the SslContext consults on each handshake, so swapping its material affects new
 * handshakes only; established connections keep the session they negotiated. (Since grpc 1.6x the
 * key manager hands out a fresh alias per update and keeps the previous entry, so a handshake that
 * chose its alias just before a swap still finds matching key and chain.)
 */
final class IdentityReloader {
  private static final Logger log = LoggerFactory.getLogger(IdentityReloader.class);

  private final TlsFile certFile;
  private final TlsFile keyFile;
  private final AdvancedTlsX509KeyManager keyManager = new AdvancedTlsX509KeyManager();
  private byte[] loaded; // fingerprint of the material in use
  private byte[]
      rejected; // fingerprint we already warned about, so a bad file warns once, not per poll
  private volatile Instant notAfter; // of the leaf in use

  IdentityReloader(TlsFile certFile, TlsFile keyFile) {
    this.certFile = certFile;
    this.keyFile = keyFile;
  }

  AdvancedTlsX509KeyManager keyManager() {
    return keyManager;
  }

  /** When the certificate being served expires. */
  Instant notAfter() {
    return notAfter;
  }

  /** Startup: any problem is fatal and reported precisely. */
  void loadInitial() throws TlsFile.TlsFileException {
    byte[] cert = certFile.read();
    byte[] key = keyFile.read();
    X509Certificate leaf = apply(cert, key);
    warnIfNotCurrentlyValid(leaf);
    log.info(
        "TLS identity loaded from {} and {}: {}", certFile.path(), keyFile.path(), describe(leaf));
  }

  /** Periodic: keep the last good material on any problem, and say why. */
  synchronized void reloadIfChanged() {
    byte[] cert;
    byte[] key;
    try {
      cert = certFile.read();
      key = keyFile.read();
    } catch (TlsFile.TlsFileException e) {
      warnOnce(
          TlsFile.fingerprint(e.getMessage().getBytes(StandardCharsets.UTF_8)), e.getMessage());
      return;
    }
    byte[] fp = TlsFile.fingerprint(cert, key);
    if (Arrays.equals(fp, loaded) || Arrays.equals(fp, rejected)) {
      return;
    }
    try {
      X509Certificate leaf = apply(cert, key);
      rejected = null;
      warnIfNotCurrentlyValid(leaf);
      log.info("TLS identity reloaded from {}: {}", certFile.path(), describe(leaf));
    } catch (TlsFile.TlsFileException e) {
      warnOnce(fp, e.getMessage());
    }
  }

  private void warnOnce(byte[] fp, String message) {
    if (!Arrays.equals(fp, rejected)) {
      rejected = fp;
      // A half-written pair (new cert, old key) also lands here; the next poll picks up the pair.
      log.warn("TLS identity not reloaded, still presenting the previous certificate: {}", message);
    }
  }

  /** Validates and installs a pair; returns the new leaf. */
  private synchronized X509Certificate apply(byte[] certBytes, byte[] keyBytes)
      throws TlsFile.TlsFileException {
    List<X509Certificate> chain;
    PrivateKey key;
    try {
      chain = Pem.certificates(certBytes);
    } catch (Pem.PemException e) {
      throw certFile.error(e.getMessage());
    }
    try {
      key = Pem.pkcs8PrivateKey(keyBytes);
    } catch (Pem.PemException e) {
      throw keyFile.error(e.getMessage());
    }
    if (!matches(key, chain.get(0))) {
      throw keyFile.error(
          "private key does not match the first certificate in "
              + certFile.configKey()
              + " "
              + certFile.path());
    }
    // The expiry first: whoever is served the new leaf then reads its expiry too (metrics, tests).
    notAfter = chain.get(0).getNotAfter().toInstant();
    keyManager.updateIdentityCredentials(chain.toArray(new X509Certificate[0]), key);
    loaded = TlsFile.fingerprint(certBytes, keyBytes);
    return chain.get(0);
  }

  /** Sign and verify a probe: works the same for RSA and EC without poking at key internals. */
  static boolean matches(PrivateKey key, X509Certificate cert) {
    String certAlg = cert.getPublicKey().getAlgorithm();
    if (!certAlg.equals(key.getAlgorithm())) {
      return false;
    }
    String sigAlg = certAlg.equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA";
    try {
      byte[] probe = "sparkgate key/certificate match probe".getBytes(StandardCharsets.US_ASCII);
      Signature signer = Signature.getInstance(sigAlg);
      signer.initSign(key);
      signer.update(probe);
      byte[] sig = signer.sign();
      Signature verifier = Signature.getInstance(sigAlg);
      verifier.initVerify(cert.getPublicKey());
      verifier.update(probe);
      return verifier.verify(sig);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private void warnIfNotCurrentlyValid(X509Certificate leaf) {
    Instant now = Instant.now();
    if (now.isAfter(leaf.getNotAfter().toInstant())) {
      log.warn(
          "{} {}: certificate expired at {}",
          certFile.configKey(),
          certFile.path(),
          leaf.getNotAfter().toInstant());
    } else if (now.isBefore(leaf.getNotBefore().toInstant())) {
      log.warn(
          "{} {}: certificate not valid before {}",
          certFile.configKey(),
          certFile.path(),
          leaf.getNotBefore().toInstant());
    }
  }

  static String describe(X509Certificate c) {
    return "subject="
        + c.getSubjectX500Principal().getName()
        + " serial="
        + c.getSerialNumber().toString(16)
        + " notAfter="
        + c.getNotAfter().toInstant();
  }
}
