package io.sparkgate.limits;

import io.grpc.ServerTransportFilter;
import io.sparkgate.config.LimitsConfig;
import io.sparkgate.forward.Acceptor;
import io.sparkgate.forward.ConnectionWatch;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Caps the client connections open at once, in all and per IP address, and counts the connections refused
 * and those that never became HTTP/2 connections (TLS not finished within the handshake timeout, not HTTP/2
 * at all). It sits on the listening socket ({@link #acceptor()}), so a refused connection is closed as it is
 * accepted, before TLS costs anything; gRPC itself has no connection limit. The transport tells it about each
 * connection through the {@link ConnectionWatch} it implements.
 */
public final class ConnectionGate {
  private static final Logger log = LoggerFactory.getLogger(ConnectionGate.class);

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
  private final LongAdder refusedTotal = new LongAdder();
  private final LongAdder refusedPerAddress = new LongAdder();
  private final LongAdder unestablished = new LongAdder();
  private final Abuse abuse = new Abuse();
  private final Acceptor acceptor = new Acceptor(this::accept);

  public ConnectionGate(LimitsConfig limits) {
    this.max = limits.maxConnections();
    this.perAddress = limits.maxConnectionsPerAddress();
    this.maxHeaderBytes = limits.maxHeaderBytes();
  }

  /** For the listening channel: it sees every accepted connection first. */
  public Acceptor acceptor() {
    return acceptor;
  }

  /**
   * Marks connections whose HTTP/2 set-up completed and starts counting their abuse; add it to the server
   * before any filter that may replace the transport attributes.
   */
  public ServerTransportFilter transportFilter() {
    return acceptor.transportFilter();
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

  /** The watch of a connection from {@code remote}, or null when it is refused. */
  ConnectionWatch.Connection accept(SocketAddress remote) {
    InetAddress address = ip(remote);
    Reason refused = admit(address);
    if (refused != null) {
      (refused == Reason.MAX_CONNECTIONS ? refusedTotal : refusedPerAddress).increment();
      // Debug only: an attacker could otherwise fill the log. The metric counts every one.
      log.debug("refused a connection from {}: limits.{}", address, refused.label());
      return null;
    }
    return new Admitted(address);
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

  /** One admitted connection: counted until it closes, and its abuse counted once it is established. */
  private final class Admitted implements ConnectionWatch.Connection {
    private final InetAddress address;
    private volatile boolean established;

    Admitted(InetAddress address) {
      this.address = address;
    }

    @Override
    public void established() {
      established = true;
    }

    @Override
    public void streamReset(int errorCode) {
      count(Http2Watch.reset(errorCode));
    }

    @Override
    public void goAway(int errorCode, String debug) {
      count(Http2Watch.kind(errorCode, debug));
    }

    private void count(Abuse.Kind kind) {
      if (kind != null) {
        abuse.count(kind);
      }
    }

    @Override
    public void closed() {
      if (!established) {
        unestablished.increment();
      }
      release(address);
    }
  }
}
