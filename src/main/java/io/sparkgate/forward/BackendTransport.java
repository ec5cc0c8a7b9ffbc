package io.sparkgate.forward;

import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.GrpcHttp2ConnectionHandler;
import io.grpc.netty.shaded.io.grpc.netty.InternalNettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiator;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiators;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.handler.codec.AdaptiveCumulator;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslHandler;
import io.grpc.netty.shaded.io.netty.util.AsciiString;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The HTTP/2 connection to the backend, plaintext or over TLS, with two changes to gRPC's.
 *
 * <p>A fixed flow-control window of {@link #STREAM_WINDOW_BYTES} per call. gRPC's auto-tuning sends a PING
 * (and wakes the backend with its ACK) whenever data arrives and none is outstanding: nearly once per small
 * call. The window is also what a call whose client stops reading can pin in the proxy: gRPC refills the
 * connection's window as data arrives, so such a call never holds up the other calls sharing the connection
 * (TenantIsolationTest), but its unread result bytes wait here, up to this window.
 *
 * <p>Received bytes are gathered into frames by composing the socket's read buffers rather than copying
 * them into one. With gRPC's default, every read that ends mid-frame is copied again whenever gRPC still
 * holds part of the buffer (it always does while a result batch is arriving), so each byte of a result was
 * copied once more than needed; profiled, that was 7% of an event loop's time while streaming.
 *
 * <p>The hook is gRPC's internal negotiator API (the only place the connection's handler is reachable);
 * Netty's own {@link AdaptiveCumulator} does the work, merging reads smaller than {@link #COMPOSE_MIN_BYTES}
 * so that a peer sending tiny segments cannot make the buffer a list of thousands of pieces.
 */
public final class BackendTransport {
  static final int COMPOSE_MIN_BYTES = 1024;

  /** Per call: one of Spark's largest Arrow batches (4 MiB by default) in flight while the last is forwarded. */
  static final int STREAM_WINDOW_BYTES = 4 * 1024 * 1024;

  private BackendTransport() {}

  /**
   * Makes {@code builder} connect in plaintext, with the flow-control window and cumulator above, giving up
   * on a TCP connection not made within {@code connectTimeout}, and on one whose peer has
   * not sent its first bytes (an HTTP/2 server's SETTINGS) within {@code handshakeTimeout} of it: a backend
   * that accepts and never answers would otherwise hold every call that waits for the connection, for good
   * when the client set no deadline. The calls then fail with UNAVAILABLE.
   */
  public static NettyChannelBuilder plaintext(
      NettyChannelBuilder builder, Duration connectTimeout, Duration handshakeTimeout) {
    return configure(
        builder, InternalProtocolNegotiators::plaintext, 80, connectTimeout, handshakeTimeout);
  }

  /**
   * As {@link #plaintext}, over TLS with {@code sslContext} (see {@code io.sparkgate.tls.BackendTls}): the
   * backend's certificate must name {@code serverName}, which is also sent as SNI. The handshake timeout
   * then covers the TLS handshake too: it ends at the first bytes that come out of TLS, the server's
   * SETTINGS, so a TLS terminator that completes the handshake in front of a Spark server that never
   * answers is caught as well.
   *
   * @param serverName a host name or IP address, without a port
   */
  public static NettyChannelBuilder tls(
      NettyChannelBuilder builder,
      SslContext sslContext,
      String serverName,
      int port,
      Duration connectTimeout,
      Duration handshakeTimeout) {
    // In the form of an authority, which is what gRPC's TLS handler parses it as.
    String authority =
        (serverName.contains(":") ? "[" + serverName + "]" : serverName) + ":" + port;
    return configure(
        builder,
        () -> InternalProtocolNegotiators.tls(sslContext, authority, null),
        443,
        connectTimeout,
        handshakeTimeout);
  }

  private static NettyChannelBuilder configure(
      NettyChannelBuilder builder,
      Supplier<InternalProtocolNegotiator.ProtocolNegotiator> negotiator,
      int defaultPort,
      Duration connectTimeout,
      Duration handshakeTimeout) {
    builder.withOption(
        ChannelOption.CONNECT_TIMEOUT_MILLIS,
        (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()));
    builder.flowControlWindow(STREAM_WINDOW_BYTES);
    InternalNettyChannelBuilder.setProtocolNegotiatorFactory(
        builder,
        new InternalProtocolNegotiator.ClientFactory() {
          @Override
          public InternalProtocolNegotiator.ProtocolNegotiator newNegotiator() {
            return new Composing(negotiator.get(), handshakeTimeout);
          }

          @Override
          public int getDefaultPort() {
            return defaultPort;
          }
        });
    return builder;
  }

  private static final class Composing implements InternalProtocolNegotiator.ProtocolNegotiator {
    private final InternalProtocolNegotiator.ProtocolNegotiator negotiator;
    private final Duration handshakeTimeout;

    Composing(InternalProtocolNegotiator.ProtocolNegotiator negotiator, Duration handshakeTimeout) {
      this.negotiator = negotiator;
      this.handshakeTimeout = handshakeTimeout;
    }

    @Override
    public AsciiString scheme() {
      return negotiator.scheme();
    }

    @Override
    public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpcHandler) {
      grpcHandler.setCumulator(new AdaptiveCumulator(COMPOSE_MIN_BYTES));
      return new FirstBytesTimeout(negotiator.newHandler(grpcHandler), handshakeTimeout);
    }

    @Override
    public void close() {
      negotiator.close();
    }
  }

  /**
   * Closes a connection whose peer sends nothing within the timeout of its opening. It puts the negotiation
   * handler after itself and leaves the pipeline at the first bytes read. Over TLS those are the server's
   * handshake, not yet an answer: it then hands the timer to a {@link Decrypted} watch placed behind the TLS
   * handler, which stops it at the first bytes that come out of TLS.
   */
  static final class FirstBytesTimeout extends ChannelInboundHandlerAdapter {
    private final ChannelHandler next;
    private final Duration timeout;
    private ScheduledFuture<?> timer;

    FirstBytesTimeout(ChannelHandler next, Duration timeout) {
      this.next = next;
      this.timeout = timeout;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      ctx.pipeline().addAfter(ctx.name(), null, next);
      if (ctx.channel().isActive()) {
        start(ctx);
      }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      start(ctx);
      ctx.fireChannelActive();
    }

    private void start(ChannelHandlerContext ctx) {
      if (timer != null) {
        return;
      }
      timer =
          ctx.executor()
              .schedule(
                  () -> {
                    ctx.fireExceptionCaught(
                        Status.UNAVAILABLE
                            .withDescription(
                                "the Spark Connect server at "
                                    + ctx.channel().remoteAddress()
                                    + " accepted the connection but did not answer within "
                                    + timeout.toMillis()
                                    + " ms (backend handshake_timeout)")
                            .asRuntimeException());
                    ctx.close();
                  },
                  timeout.toNanos(),
                  TimeUnit.NANOSECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      // gRPC's TLS handler put the SslHandler in before the first byte could arrive.
      ChannelHandlerContext tls = ctx.pipeline().context(SslHandler.class);
      if (tls == null) {
        stop();
      } else if (timer != null) {
        ctx.pipeline().addAfter(tls.name(), null, new Decrypted(timer));
      }
      ctx.pipeline().remove(this);
      ctx.fireChannelRead(msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      stop();
      ctx.fireChannelInactive();
    }

    private void stop() {
      if (timer != null) {
        timer.cancel(false);
      }
    }
  }

  /** Stops the handshake timer at the first bytes TLS hands on, and leaves the pipeline. */
  static final class Decrypted extends ChannelInboundHandlerAdapter {
    private final ScheduledFuture<?> timer;

    Decrypted(ScheduledFuture<?> timer) {
      this.timer = timer;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      timer.cancel(false);
      ctx.pipeline().remove(this);
      ctx.fireChannelRead(msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      timer.cancel(false);
      ctx.fireChannelInactive();
    }
  }
}
