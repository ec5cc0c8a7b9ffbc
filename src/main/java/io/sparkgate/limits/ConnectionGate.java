package io.sparkgate.limits;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.ServerTransportFilter;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.ChannelPipeline;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.grpc.netty.shaded.io.netty.util.AttributeKey;
import io.sparkgate.config.LimitsConfig;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Caps the client connections open at once, in all and per IP address, and counts the connections refused
 * and those that never became HTTP/2 connections (TLS not finished within the handshake timeout, not HTTP/2
 * at all). It sits on the listening socket ({@link #acceptor()}), so a refused connection is closed as it is
 * accepted, before TLS costs anything; gRPC itself has no connection limit.
 */
public final class ConnectionGate {
  private static final Logger log = LoggerFactory.getLogger(ConnectionGate.class);
  private static final AttributeKey<Boolean> ESTABLISHED =
      AttributeKey.valueOf("sparkgate.established");

  /** Why a connection was refused, as the metric's {@code reason} label shows it. */
  public enum Reason {
    MAX_CONNECTIONS,
    MAX_CONNECTIONS_PER_ADDRESS;

    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  private final int max;
  private final int perAddress;
  private final int maxHeaderBytes;
  private final AtomicInteger open = new AtomicInteger();
  private final ConcurrentHashMap<InetAddress, Integer> byAddress = new ConcurrentHashMap<>();
  private final Map<SocketAddress, Channel> accepted = new ConcurrentHashMap<>();
  private final LongAdder refusedTotal = new LongAdder();
  private final LongAdder refusedPerAddress = new LongAdder();
  private final LongAdder unestablished = new LongAdder();
  private final Abuse abuse = new Abuse();
  private final Acceptor acceptor = new Acceptor();

  public ConnectionGate(LimitsConfig limits) {
    this.max = limits.maxConnections();
    this.perAddress = limits.maxConnectionsPerAddress();
    this.maxHeaderBytes = limits.maxHeaderBytes();
  }

  /** The handler for the listening channel's pipeline: it sees every accepted connection first. */
  public ChannelHandler acceptor() {
    return acceptor;
  }

  /**
   * Marks connections whose HTTP/2 set-up completed and starts counting their abuse; add it to the server
   * before any filter that may replace the transport attributes.
   */
  public ServerTransportFilter transportFilter() {
    return new ServerTransportFilter() {
      @Override
      public Attributes transportReady(Attributes attrs) {
        SocketAddress remote = attrs.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        Channel channel = remote == null ? null : accepted.get(remote);
        if (channel != null) {
          channel.attr(ESTABLISHED).set(Boolean.TRUE);
          watch(channel.pipeline());
        }
        return attrs;
      }
    };
  }

  /** Client connections open now. */
  public int open() {
    return open.get();
  }

  /** Connections closed as they were accepted, for this reason. */
  public long refused(Reason reason) {
    return reason == Reason.MAX_CONNECTIONS ? refusedTotal.sum() : refusedPerAddress.sum();
  }

  /** Connections closed before their TLS and HTTP/2 set-up completed (timeouts, failed TLS, not HTTP/2). */
  public long unestablished() {
    return unestablished.sum();
  }

  /**
   * Refuses calls whose headers exceed {@code limits.max_header_bytes}, clearly; give gRPC {@link
   * #transportHeaderLimit} as its own limit.
   */
  public io.grpc.ServerInterceptor headerLimit() {
    return new HeaderLimit(maxHeaderBytes, abuse);
  }

  /** The header list size for gRPC to enforce (and advertise), above the one refused clearly. */
  public int transportHeaderLimit() {
    return HeaderLimit.transportLimit(maxHeaderBytes);
  }

  /** The HTTP/2 abuse the proxy cut off on established connections. */
  public Abuse abuse() {
    return abuse;
  }

  private void watch(ChannelPipeline pipeline) {
    for (Map.Entry<String, ChannelHandler> e : pipeline) {
      if (e.getValue() instanceof Http2ConnectionHandler) {
        pipeline.addBefore(e.getKey(), "sparkgate-http2-watch", new Http2Watch(abuse));
        return;
      }
    }
  }

  /** Null when admitted (and counted), else why not. */
  private Reason admit(InetAddress address) {
    if (open.incrementAndGet() > max) {
      open.decrementAndGet();
      return Reason.MAX_CONNECTIONS;
    }
    if (address != null) {
      boolean[] full = new boolean[1];
      byAddress.compute(
          address,
          (a, n) -> {
            int now = n == null ? 0 : n;
            if (now >= perAddress) {
              full[0] = true;
              return now;
            }
            return now + 1;
          });
      if (full[0]) {
        open.decrementAndGet();
        return Reason.MAX_CONNECTIONS_PER_ADDRESS;
      }
    }
    return null;
  }

  private void release(InetAddress address) {
    open.decrementAndGet();
    if (address != null) {
      byAddress.computeIfPresent(address, (a, n) -> n <= 1 ? null : n - 1);
    }
  }

  private static InetAddress ip(SocketAddress address) {
    return address instanceof InetSocketAddress inet ? inet.getAddress() : null;
  }

  @ChannelHandler.Sharable
  private final class Acceptor extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (!(msg instanceof Channel child)) {
        ctx.fireChannelRead(msg);
        return;
      }
      SocketAddress remote = child.remoteAddress();
      InetAddress address = ip(remote);
      Reason refused = admit(address);
      if (refused != null) {
        (refused == Reason.MAX_CONNECTIONS ? refusedTotal : refusedPerAddress).increment();
        // Debug only: an attacker could otherwise fill the log. The metric counts every one.
        log.debug("refused a connection from {}: limits.{}", address, refused.label());
        child.unsafe().closeForcibly();
        return;
      }
      if (remote != null) {
        accepted.put(remote, child);
      }
      child
          .closeFuture()
          .addListener(
              f -> {
                if (remote != null) {
                  accepted.remove(remote, child);
                }
                if (child.attr(ESTABLISHED).get() == null) {
                  unestablished.increment();
                }
                release(address);
              });
      ctx.fireChannelRead(child);
    }
  }
}
