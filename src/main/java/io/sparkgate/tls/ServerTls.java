package io.sparkgate.tls;

import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

/** Placeholder until the tls package lands. */
public final class ServerTls implements Closeable {
  private final SslContext context;

  private ServerTls(SslContext context) {
    this.context = context;
  }

  public static ServerTls load(Path certFile, Path keyFile, Path clientCaFile, Duration reloadInterval)
      throws IOException {
    return new ServerTls(GrpcSslContexts.forServer(certFile.toFile(), keyFile.toFile()).build());
  }

  public SslContext sslContext() {
    return context;
  }

  @Override
  public void close() {}
}
