package io.sparkgate.tls;

import io.grpc.util.AdvancedTlsX509TrustManager;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps an {@link AdvancedTlsX509TrustManager} in step with a CA file (see {@link IdentityReloader} for why we
 * poll ourselves): tls.client_ca_file, which client certificates must chain to (CERTIFICATE_ONLY_VERIFICATION:
 * there is no host name to check for a client), or a backend's tls.ca_file, which its server certificate must
 * chain to, with the name checked too (CERTIFICATE_AND_HOST_NAME_VERIFICATION against the engine's peer host,
 * the backend's server_name).
 */
final class TrustReloader {
  private static final Logger log = LoggerFactory.getLogger(TrustReloader.class);

  private final TlsFile caFile;
  private final boolean checksServers;
  private final String what; // for the log: "TLS client CA" or "backend TLS CA"
  private final AdvancedTlsX509TrustManager trustManager;
  private byte[] loaded;
  private byte[] rejected;

  /** For the listener: client certificates must chain to {@code caFile}. */
  TrustReloader(TlsFile caFile) {
    this(caFile, false);
  }

  private TrustReloader(TlsFile caFile, boolean checksServers) {
    this.caFile = caFile;
    this.checksServers = checksServers;
    this.what = checksServers ? "backend TLS CA" : "TLS client CA";
    this.trustManager = newTrustManager(checksServers);
  }

  /** For a backend: its certificate must chain to {@code caFile} and name the host it was reached as. */
  static TrustReloader forServers(TlsFile caFile) {
    return new TrustReloader(caFile, true);
  }

  /** Verifies servers by chain and name against the JVM's default trust store; nothing to reload. */
  static X509ExtendedTrustManager systemDefaultForServers() {
    AdvancedTlsX509TrustManager manager = newTrustManager(true);
    try {
      manager.useSystemDefaultTrustCerts();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot read the JVM's default trust store", e);
    }
    return manager;
  }

  private static AdvancedTlsX509TrustManager newTrustManager(boolean checksServers) {
    try {
      return AdvancedTlsX509TrustManager.newBuilder()
          .setVerification(
              checksServers
                  ? AdvancedTlsX509TrustManager.Verification.CERTIFICATE_AND_HOST_NAME_VERIFICATION
                  : AdvancedTlsX509TrustManager.Verification.CERTIFICATE_ONLY_VERIFICATION)
          .build();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot create trust manager", e);
    }
  }

  /**
   * The manager to give the SslContext. It hides the CA list from {@code getAcceptedIssuers()}:
   * the OpenSSL provider copies that list into its CertificateRequest once, when the context is
   * built, so after a CA rotation it would keep advertising the old CA and clients that pick their
   * certificate by issuer (the JDK's default key manager does) would send none. With an empty list
   * clients send the certificate they have, and verification below still decides.
   */
  X509ExtendedTrustManager trustManager() {
    // A client (the proxy, towards a backend) never asks for the accepted issuers: no list to go
    // stale.
    if (checksServers) return trustManager;
    return new X509ExtendedTrustManager() {
      @Override
      public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
          throws CertificateException {
        trustManager.checkClientTrusted(chain, authType, socket);
      }

      @Override
      public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
          throws CertificateException {
        trustManager.checkClientTrusted(chain, authType, engine);
      }

      @Override
      public void checkClientTrusted(X509Certificate[] chain, String authType)
          throws CertificateException {
        trustManager.checkClientTrusted(chain, authType);
      }

      @Override
      public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
          throws CertificateException {
        throw new CertificateException("server-side trust manager: not for checking servers");
      }

      @Override
      public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
          throws CertificateException {
        throw new CertificateException("server-side trust manager: not for checking servers");
      }

      @Override
      public void checkServerTrusted(X509Certificate[] chain, String authType)
          throws CertificateException {
        throw new CertificateException("server-side trust manager: not for checking servers");
      }

      @Override
      public X509Certificate[] getAcceptedIssuers() {
        return new X509Certificate[0];
      }
    };
  }

  void loadInitial() throws TlsFile.TlsFileException {
    byte[] content = caFile.read();
    int count = apply(content);
    log.info(
        "{} loaded from {}: {} certificate(s){}",
        what,
        caFile.path(),
        count,
        checksServers ? "" : "; client certificates are required");
  }

  synchronized void reloadIfChanged() {
    byte[] content;
    try {
      content = caFile.read();
    } catch (TlsFile.TlsFileException e) {
      warnOnce(
          TlsFile.fingerprint(e.getMessage().getBytes(StandardCharsets.UTF_8)), e.getMessage());
      return;
    }
    byte[] fp = TlsFile.fingerprint(content);
    if (Arrays.equals(fp, loaded) || Arrays.equals(fp, rejected)) {
      return;
    }
    try {
      int count = apply(content);
      rejected = null;
      log.info("{} reloaded from {}: {} certificate(s)", what, caFile.path(), count);
    } catch (TlsFile.TlsFileException e) {
      warnOnce(fp, e.getMessage());
    }
  }

  private void warnOnce(byte[] fp, String message) {
    if (!Arrays.equals(fp, rejected)) {
      rejected = fp;
      log.warn("{} not reloaded, still trusting the previous CAs: {}", what, message);
    }
  }

  private synchronized int apply(byte[] content) throws TlsFile.TlsFileException {
    List<X509Certificate> cas;
    try {
      cas = Pem.certificates(content);
    } catch (Pem.PemException e) {
      throw caFile.error(e.getMessage());
    }
    try {
      trustManager.updateTrustCredentials(cas.toArray(new X509Certificate[0]));
    } catch (IOException | GeneralSecurityException e) {
      throw caFile.error("cannot use as trust anchors (" + e.getMessage() + ")");
    }
    loaded = TlsFile.fingerprint(content);
    return cas.size();
  }
}
