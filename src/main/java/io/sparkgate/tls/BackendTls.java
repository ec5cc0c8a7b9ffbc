package io.sparkgate.tls;

import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.netty.handler.ssl.OpenSslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import java.io.Closeable;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import javax.net.ssl.SSLException;
import javax.net.ssl.X509ExtendedTrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy's client-side TLS towards its backends: one {@link SslContext} per set of files, offering ALPN
 * {@code h2} and the listener's protocols and ciphers ({@link TlsPolicy}), verifying the backend's certificate
 * by chain (to the CA file, or to the JVM's default trust store without one) and by name (the host name
 * verification of the engine's peer host, which the transport sets to the backend's server_name), and
 * presenting a client certificate when one is configured.
 *
 * <p>The CA, certificate and key files are re-read every reload interval as the listener's are: a renewed
 * file is used by every handshake after it is read, so new connections get it; connections already open keep
 * the session they negotiated (a backend connection lives until it breaks or the proxy stops, which is what
 * a server-side rotation with a grace period expects; the JVM's default trust store is read once). A file
 * that does not load is logged once and the previous material stays in use.
 *
 * <p>Backends that share their files share one context, and every context reloads on one thread; {@link
 * #close()} stops it.
 */
public final class BackendTls implements Closeable {
  private static final Logger log = LoggerFactory.getLogger(BackendTls.class);

  private record Files(Path ca, Path cert, Path key, Duration reloadInterval) {}

  private final Map<Files, SslContext> contexts = new HashMap<>();
  private ScheduledExecutorService reloader; // started with the first context that reloads

  /**
   * The context for these files, loaded on first request (and then re-read every {@code reloadInterval}).
   *
   * @param label names the backend in errors and logs, e.g. {@code backend spark-a:15002}
   * @param caFileOrNull PEM CA certificate(s) the backend's certificate must chain to; null: the JVM's
   *     default trust store
   * @param certFileOrNull PEM client certificate chain, leaf first; null: none is presented
   * @param keyFileOrNull the client certificate's unencrypted PKCS#8 PEM key; null exactly when the
   *     certificate is
   * @throws IllegalArgumentException naming the backend, the key and the file, and what is wrong with it
   */
  public synchronized SslContext context(
      String label,
      Path caFileOrNull,
      Path certFileOrNull,
      Path keyFileOrNull,
      Duration reloadInterval) {
    if ((certFileOrNull == null) != (keyFileOrNull == null)) {
      throw new IllegalArgumentException(
          label + ": a client certificate needs its key, and a key its certificate");
    }
    Files files = new Files(caFileOrNull, certFileOrNull, keyFileOrNull, reloadInterval);
    SslContext context = contexts.get(files);
    if (context == null) {
      context = load(label, files);
      contexts.put(files, context);
    }
    return context;
  }

  private SslContext load(String label, Files files) {
    TrustReloader trust =
        files.ca() == null
            ? null
            : TrustReloader.forServers(new TlsFile(label + " tls.ca_file", files.ca()));
    IdentityReloader identity =
        files.cert() == null
            ? null
            : new IdentityReloader(
                new TlsFile(label + " tls.cert_file", files.cert()),
                new TlsFile(label + " tls.key_file", files.key()));
    try {
      if (trust != null) trust.loadInitial();
      if (identity != null) identity.loadInitial();
    } catch (TlsFile.TlsFileException e) {
      throw new IllegalArgumentException(e.getMessage());
    }
    X509ExtendedTrustManager trustManager =
        trust == null ? TrustReloader.systemDefaultForServers() : trust.trustManager();
    SslContextBuilder builder = GrpcSslContexts.forClient(); // ALPN h2, OpenSSL when it loads
    TlsPolicy.apply(builder); // after gRPC's settings: ours are the protocols and ciphers in force
    builder.trustManager(trustManager);
    if (identity != null) builder.keyManager(identity.keyManager());
    SslContext context;
    try {
      context = builder.build();
    } catch (SSLException e) {
      throw new IllegalStateException(
          label + ": cannot build the TLS context: " + e.getMessage(), e);
    }
    if (trust != null || identity != null) {
      Runnable reload =
          () -> {
            if (trust != null) trust.reloadIfChanged();
            if (identity != null) identity.reloadIfChanged();
          };
      if (reloader == null) reloader = ReloadThread.start();
      ReloadThread.every(reloader, files.reloadInterval(), reload);
    }
    log.info(
        "{}: TLS, provider {}, trusting {}, client certificate {}, reload {}",
        label,
        context instanceof OpenSslContext ? "OpenSSL" : "JDK",
        files.ca() == null ? "the JVM's default CAs" : files.ca(),
        files.cert() == null ? "none" : files.cert(),
        trust == null && identity == null ? "off" : "every " + files.reloadInterval());
    return context;
  }

  /** Stops reloading; the contexts keep the last loaded material. */
  @Override
  public synchronized void close() {
    if (reloader != null) reloader.shutdownNow();
  }
}
