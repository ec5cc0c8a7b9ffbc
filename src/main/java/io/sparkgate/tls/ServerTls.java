package io.sparkgate.tls;

import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.OpenSslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslProvider;
import java.io.Closeable;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy's server-side TLS: one {@link SslContext} whose key (and, for mTLS, trust) material is
 * re-read from disk periodically, so rotated certificates take effect for new connections without a
 * restart while open connections keep what they negotiated.
 *
 * <p>Hand {@link #sslContext()} to {@code NettyServerBuilder.sslContext(...)}; {@link #close()} after
 * the server has shut down to stop the reload thread.
 */
public final class ServerTls implements Closeable {
  private static final Logger log = LoggerFactory.getLogger(ServerTls.class);

  static final List<String> PROTOCOLS = TlsPolicy.PROTOCOLS;

  private final SslContext sslContext;
  private final IdentityReloader identity;
  private final ScheduledExecutorService reloader; // null when reloading is off

  private ServerTls(
      SslContext sslContext, IdentityReloader identity, ScheduledExecutorService reloader) {
    this.sslContext = sslContext;
    this.identity = identity;
    this.reloader = reloader;
  }

  /**
   * Loads the server identity (and optional client CA) and starts reloading them every
   * {@code reloadInterval}.
   *
   * @param certFile tls.cert_file: PEM certificate chain, leaf first
   * @param keyFile tls.key_file: unencrypted PKCS#8 PEM private key (RSA or EC) for the leaf
   * @param clientCaFileOrNull tls.client_ca_file: PEM CA certificate(s); when given, every client
   *     must present a certificate that chains to one of them (mTLS); null for server-only TLS
   * @param reloadInterval how often to re-read the files; null, zero or negative disables reloading
   * @throws IllegalArgumentException naming the config key, the file and what is wrong with it
   */
  public static ServerTls load(
      Path certFile, Path keyFile, Path clientCaFileOrNull, Duration reloadInterval) {
    return load(certFile, keyFile, clientCaFileOrNull, reloadInterval, null);
  }

  /** As {@link #load(Path, Path, Path, Duration)}; {@code provider} null means gRPC's default. */
  static ServerTls load(
      Path certFile,
      Path keyFile,
      Path clientCaFileOrNull,
      Duration reloadInterval,
      SslProvider provider) {
    IdentityReloader identity =
        new IdentityReloader(
            new TlsFile(TlsFile.CERT_FILE, Objects.requireNonNull(certFile, TlsFile.CERT_FILE)),
            new TlsFile(TlsFile.KEY_FILE, Objects.requireNonNull(keyFile, TlsFile.KEY_FILE)));
    TrustReloader trust =
        clientCaFileOrNull == null
            ? null
            : new TrustReloader(new TlsFile(TlsFile.CLIENT_CA_FILE, clientCaFileOrNull));
    try {
      identity.loadInitial();
      if (trust != null) {
        trust.loadInitial();
      }
    } catch (TlsFile.TlsFileException e) {
      throw new IllegalArgumentException(e.getMessage());
    }

    SslContextBuilder builder = SslContextBuilder.forServer(identity.keyManager());
    // configure() sets ALPN "h2"; it picks OpenSSL (the
    // BoringSSL bundled in grpc-netty-shaded) when it loads, else the JDK provider.
    builder =
        provider == null
            ? GrpcSslContexts.configure(builder)
            : GrpcSslContexts.configure(builder, provider);
    TlsPolicy.apply(builder); // after configure(): ours, not gRPC's, is the cipher list in force
    if (trust != null) {
      builder.trustManager(trust.trustManager()).clientAuth(ClientAuth.REQUIRE);
    }
    SslContext context;
    try {
      context = builder.build();
    } catch (SSLException e) {
      throw new IllegalStateException("cannot build the TLS context: " + e.getMessage(), e);
    }

    ScheduledExecutorService reloader = null;
    if (reloadInterval != null && !reloadInterval.isZero() && !reloadInterval.isNegative()) {
      reloader = ReloadThread.start();
      ReloadThread.every(
          reloader,
          reloadInterval,
          () -> {
            identity.reloadIfChanged();
            if (trust != null) {
              trust.reloadIfChanged();
            }
          });
    }
    log.info(
        "TLS ready: protocols {}, provider {}, client certificates {}, reload {}",
        PROTOCOLS,
        context instanceof OpenSslContext ? "OpenSSL" : "JDK",
        trust == null ? "not requested" : "required",
        reloader == null ? "off" : "every " + reloadInterval);
    return new ServerTls(context, identity, reloader);
  }

  /** The context for NettyServerBuilder; it stays the same object across reloads. */
  public SslContext sslContext() {
    return sslContext;
  }

  /** When the certificate now served expires (it changes when a renewed one is reloaded). */
  public Instant certificateNotAfter() {
    return identity.notAfter();
  }

  /** Stops reloading. The context keeps serving the last loaded material. */
  @Override
  public void close() {
    if (reloader != null) {
      reloader.shutdownNow();
    }
  }
}
