package io.sparkgate.forward;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.ServerTransportFilter;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.ChannelPipeline;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2ConnectionHandler;
import java.net.SocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Shows each client connection of the gRPC listener to a {@link ConnectionWatch}. It sits on the listening
 * channel ({@link EventLoops#serve(io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder, Acceptor)}), so it
 * sees a connection as it is accepted, before gRPC does, and closes the ones the watch refuses; its {@link
 * #transportFilter()} says when gRPC took a connection as a transport, and from then on the frames the proxy
 * sends it that refuse streams or close it are reported too. gRPC itself reports none of this.
 */
public final class Acceptor {
  private final ConnectionWatch watch;

  /**
   * Open connections by their remote address: gRPC's transport filter sees only the address, and needs the
   * channel to watch its frames.
   */
  private final Map<SocketAddress, Accepted> accepted = new ConcurrentHashMap<>();

  private final Handler handler = new Handler();

  private record Accepted(Channel channel, ConnectionWatch.Connection connection) {}

  public Acceptor(ConnectionWatch watch) {
    this.watch = watch;
  }

  /**
   * Marks connections whose HTTP/2 set-up completed and starts reading their frames; add it to the server
   * before any filter that may replace the transport attributes.
   */
  public ServerTransportFilter transportFilter() {
    return new ServerTransportFilter() {
      @Override
      public Attributes transportReady(Attributes attrs) {
        SocketAddress remote = attrs.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        Accepted a = remote == null ? null : accepted.get(remote);
        if (a != null) {
          a.connection().established();
          tap(a.channel().pipeline(), a.connection());
        }
        return attrs;
      }
    };
  }

  /** The handler for the listening channel's pipeline. */
  ChannelHandler handler() {
    return handler;
  }

  /** Reads what the HTTP/2 codec writes, below it (and above TLS). */
  private static void tap(ChannelPipeline pipeline, ConnectionWatch.Connection connection) {
    for (Map.Entry<String, ChannelHandler> e : pipeline) {
      if (e.getValue() instanceof Http2ConnectionHandler) {
        pipeline.addBefore(e.getKey(), "sparkgate-frame-tap", new FrameTap(connection));
        return;
      }
    }
  }

  @ChannelHandler.Sharable
  private final class Handler extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (!(msg instanceof Channel child)) {
        ctx.fireChannelRead(msg);
        return;
      }
      SocketAddress remote = child.remoteAddress();
      ConnectionWatch.Connection connection = watch.accepted(remote);
      if (connection == null) {
        child.unsafe().closeForcibly();
        return;
      }
      Accepted a = new Accepted(child, connection);
      if (remote != null) {
        accepted.put(remote, a);
      }
      child
          .closeFuture()
          .addListener(
              f -> {
                if (remote != null) {
                  accepted.remove(remote, a);
                }
                connection.closed();
              });
      ctx.fireChannelRead(child);
    }
  }
}
