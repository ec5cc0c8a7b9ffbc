package io.sparkgate.testing;

import io.grpc.ClientInterceptor;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Client channels to a server on this machine's loopback address, as builders so a test can add what it needs
 * (a message size, an executor, an allocator) before {@code build()}. TLS channels name the server
 * {@code localhost}, the name the development certificates are issued for.
 */
public final class Channels {
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private Channels() {}

  /** Plaintext HTTP/2 to 127.0.0.1:{@code port}. */
  public static NettyChannelBuilder plaintext(int port) {
    return NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext();
  }

  /** TLS to 127.0.0.1:{@code port} with {@code client}'s settings (protocols, trust, client identity). */
  public static NettyChannelBuilder tls(int port, SslContext client) {
    return NettyChannelBuilder.forAddress("127.0.0.1", port)
        .sslContext(client)
        .overrideAuthority("localhost");
  }

  /** TLS trusting the CA certificate {@code caPem}, without a client certificate. */
  public static NettyChannelBuilder tls(int port, Path caPem) throws IOException {
    return tls(port, GrpcSslContexts.forClient().trustManager(caPem.toFile()).build());
  }

  /** TLS trusting {@code caPem}, presenting {@code clientCert} (PEM) with its key. */
  public static NettyChannelBuilder tls(int port, Path caPem, Path clientCert, Path clientKey)
      throws IOException {
    return tls(
        port,
        GrpcSslContexts.configure(
                SslContextBuilder.forClient()
                    .trustManager(caPem.toFile())
                    .keyManager(clientCert.toFile(), clientKey.toFile()))
            .build());
  }

  /** Sends {@code authorization: Bearer <token>} on every call, as the Spark Connect clients do. */
  public static ClientInterceptor bearer(String token) {
    Metadata headers = new Metadata();
    headers.put(AUTHORIZATION, "Bearer " + token);
    return MetadataUtils.newAttachHeadersInterceptor(headers);
  }
}
