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
 * Keeps an {@link AdvancedTlsX509TrustManager} in step with tls.client_ca_file (see
 * {@link IdentityReloader} for why we poll ourselves). CERTIFICATE_ONLY_VERIFICATION: clients are
 * verified by chain to the CA; there is no host name to check for a client.
 */
final class TrustReloader {
  private static final Logger log = LoggerFactory.getLogger(TrustReloader.class);

  private final TlsFile caFile;
  private final AdvancedTlsX509TrustManager trustManager;
  private byte[] loaded;
  private byte[] rejected;

  TrustReloader(TlsFile caFile) {
    this.caFile = caFile;
    try {
      this.trustManager =
          AdvancedTlsX509TrustManager.newBuilder()
              .setVerification(
                  AdvancedTlsX509TrustManager.Verification.CERTIFICATE_ONLY_VERIFICATION)
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
        "TLS client CA loaded from {}: {} certificate(s); client certificates are required",
        caFile.path(),
        count);
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
      log.info("TLS client CA reloaded from {}: {} certificate(s)", caFile.path(), count);
    } catch (TlsFile.TlsFileException e) {
      warnOnce(fp, e.getMessage());
    }
  }

  private void warnOnce(byte[] fp, String message) {
    if (!Arrays.equals(fp, rejected)) {
      rejected = fp;
      log.warn("TLS client CA not reloaded, still trusting the previous CAs: {}", message);
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
