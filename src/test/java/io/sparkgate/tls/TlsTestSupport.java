package io.sparkgate.tls;

import static org.junit.jupiter.api.Assertions.fail;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.bootstrap.Bootstrap;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.ChannelInitializer;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslHandler;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslProvider;
import io.grpc.netty.shaded.io.netty.util.ReferenceCountUtil;
import io.grpc.protobuf.services.HealthStatusManager;
import io.sparkgate.testing.Channels;
import java.io.IOException;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLSession;

/** Real servers and real Netty TLS clients on 127.0.0.1, shared by the TLS tests. */
final class TlsTestSupport {
  static final Duration RELOAD = Duration.ofMillis(200);

  private TlsTestSupport() {}

  /** A real grpc-netty-shaded server on an ephemeral port serving the standard health service. */
  /** The CA {@link DevCertificates#generate} wrote, to issue more certificates from. */
  static DevCertificates.Authority authority(DevCertificates.Generated certs) throws Exception {
    return new DevCertificates.Authority(
        Pem.certificates(Files.readAllBytes(certs.caCert())).get(0),
        Pem.pkcs8PrivateKey(Files.readAllBytes(certs.caKey())));
  }

  static Server startServer(ServerTls tls) throws IOException {
    return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .sslContext(tls.sslContext())
        .addService(new HealthStatusManager().getHealthService())
        .build()
        .start();
  }

  static void stop(Server server) throws InterruptedException {
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** A gRPC client context trusting {@code caPem}, limited to {@code protocol}, optional client identity. */
  static SslContext clientContext(
      Path caPem,
      String protocol,
      Path clientCertOrNull,
      Path clientKeyOrNull,
      SslProvider provider)
      throws IOException {
    SslContextBuilder b =
        GrpcSslContexts.configure(SslContextBuilder.forClient(), provider)
            .trustManager(caPem.toFile())
            .protocols(protocol);
    if (clientCertOrNull != null) {
      b.keyManager(clientCertOrNull.toFile(), clientKeyOrNull.toFile());
    }
    return b.build();
  }

  static SslContext clientContext(Path caPem, String protocol) throws IOException {
    return clientContext(caPem, protocol, null, null, SslProvider.OPENSSL);
  }

  static ManagedChannel channel(Server server, SslContext client) {
    return Channels.tls(server.getPort(), client).build();
  }

  static ManagedChannel plaintextChannel(Server server) {
    return Channels.plaintext(server.getPort()).build();
  }

  /** What one health call saw of the TLS session it ran on. */
  record CallResult(
      HealthCheckResponse.ServingStatus status,
      String protocol,
      BigInteger serverSerial,
      SSLSession session,
      java.net.SocketAddress clientAddress) {}

  /** Makes a health call and reports the TLS session of the connection that carried it. */
  static CallResult check(ManagedChannel channel) {
    SessionCapture capture = new SessionCapture();
    HealthCheckResponse r =
        HealthGrpc.newBlockingStub(ClientInterceptors.intercept(channel, capture))
            .withDeadlineAfter(10, TimeUnit.SECONDS)
            .check(HealthCheckRequest.getDefaultInstance());
    SSLSession s = capture.session;
    BigInteger serial;
    try {
      serial = ((X509Certificate) s.getPeerCertificates()[0]).getSerialNumber();
    } catch (javax.net.ssl.SSLPeerUnverifiedException e) {
      throw new AssertionError(e);
    }
    return new CallResult(r.getStatus(), s.getProtocol(), serial, s, capture.local);
  }

  private static final class SessionCapture implements ClientInterceptor {
    volatile SSLSession session;
    volatile java.net.SocketAddress local;

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
        @Override
        public void start(Listener<R> listener, Metadata headers) {
          ClientCall<Q, R> call = this;
          super.start(
              new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                @Override
                public void onHeaders(Metadata h) {
                  session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
                  local = call.getAttributes().get(Grpc.TRANSPORT_ATTR_LOCAL_ADDR);
                  super.onHeaders(h);
                }
              },
              headers);
        }
      };
    }
  }

  /** Outcome of a bare TLS handshake (no HTTP/2 on top). */
  record Handshake(
      boolean success, String protocol, String alpn, BigInteger serverSerial, Throwable failure) {}

  /** A bare Netty TLS client handshake against 127.0.0.1:port. */
  static Handshake handshake(int port, SslContext client) throws InterruptedException {
    MultiThreadIoEventLoopGroup group =
        new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    // Kept from initChannel: a refused handshake can close the channel (and empty its pipeline)
    // before connect() returns, so looking the handler up afterwards would race.
    AtomicReference<SslHandler> handler = new AtomicReference<>();
    try {
      io.grpc.netty.shaded.io.netty.channel.Channel ch =
          new Bootstrap()
              .group(group)
              .channel(NioSocketChannel.class)
              .handler(
                  new ChannelInitializer<NioSocketChannel>() {
                    @Override
                    protected void initChannel(NioSocketChannel c) {
                      handler.set(client.newHandler(c.alloc(), "localhost", port));
                      c.pipeline().addLast(handler.get());
                      // The outcome is read from the handshake future; drop data and errors
                      // quietly.
                      c.pipeline()
                          .addLast(
                              new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                  ReferenceCountUtil.release(msg);
                                }

                                @Override
                                public void exceptionCaught(
                                    ChannelHandlerContext ctx, Throwable cause) {
                                  ctx.close();
                                }
                              });
                    }
                  })
              .connect("127.0.0.1", port)
              .sync()
              .channel();
      SslHandler ssl = handler.get();
      if (!ssl.handshakeFuture().await(10, TimeUnit.SECONDS)) {
        fail("handshake timed out");
      }
      try {
        if (!ssl.handshakeFuture().isSuccess()) {
          return new Handshake(false, null, null, null, ssl.handshakeFuture().cause());
        }
        SSLSession s = ssl.engine().getSession();
        BigInteger serial = ((X509Certificate) s.getPeerCertificates()[0]).getSerialNumber();
        return new Handshake(true, s.getProtocol(), ssl.applicationProtocol(), serial, null);
      } catch (javax.net.ssl.SSLPeerUnverifiedException e) {
        throw new AssertionError(e);
      } finally {
        ch.close().await(5, TimeUnit.SECONDS);
      }
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
  }

  /** Full chain of causes as one string, for asserting on how a failure surfaced. */
  static String causes(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage()).append(" | ");
    }
    return sb.toString();
  }
}
