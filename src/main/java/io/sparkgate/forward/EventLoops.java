package io.sparkgate.forward;

import io.grpc.Channel;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoop;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.ServerChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.netty.shaded.io.netty.util.internal.PlatformDependent;
import java.nio.channels.spi.SelectorProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The proxy's network threads and its connections to the backend: one backend connection per event loop,
 * each on its loop, and the client-facing server on the same loops. A call is forwarded over the backend
 * connection of the loop that read it, so a request and its response never change threads on their way
 * through (nginx's worker model). With gRPC's defaults the server and the single backend channel each pick
 * any loop, and every message crosses threads twice: a queue and a wake-up each time, which on a small
 * call cost more than everything else the proxy does.
 */
public final class EventLoops implements AutoCloseable {
  private final EventLoopGroup boss;
  private final EventLoopGroup workers;
  private final Class<? extends ServerChannel> serverChannelType;
  private final EventLoop[] loops;
  private final Class<? extends io.grpc.netty.shaded.io.netty.channel.Channel> channelType;
  private final Function<String, NettyChannelBuilder> builders;
  private final String first;
  // Per backend address, one channel per loop (index as loops). Built when a backend is first used,
  // so a pool added by a reload gets its connections without a restart.
  private final ConcurrentHashMap<String, ManagedChannel[]> backends = new ConcurrentHashMap<>();
  private final AtomicInteger next = new AtomicInteger();
  private volatile boolean closed;

  private EventLoops(
      EventLoopGroup boss,
      EventLoopGroup workers,
      Class<? extends ServerChannel> serverChannelType,
      EventLoop[] loops,
      Class<? extends io.grpc.netty.shaded.io.netty.channel.Channel> channelType,
      Function<String, NettyChannelBuilder> builders,
      String first) {
    this.boss = boss;
    this.workers = workers;
    this.serverChannelType = serverChannelType;
    this.loops = loops;
    this.channelType = channelType;
    this.builders = builders;
    this.first = first;
  }

  /**
   * Starts {@code threads} event loops (epoll where the bundled native transport loads, NIO elsewhere); the
   * channels to each backend are built on first use, one on each loop.
   *
   * @param spin how long a loop with nothing to do polls before it sleeps ({@link SpinThenSleep}); zero: never
   * @param backend a new builder for one channel to the backend of this {@code host:port} (plaintext, limits,
   *     executor); its event loop and channel type are set here
   * @param first the backend calls that name none use
   */
  public static EventLoops start(
      int threads, Duration spin, Function<String, NettyChannelBuilder> backend, String first) {
    if (threads < 1) {
      throw new IllegalArgumentException("event loop threads must be at least 1, got " + threads);
    }
    boolean epoll = Epoll.isAvailable();
    EventLoopGroup boss = group(epoll, 1, "sparkgate-accept");
    EventLoopGroup workers =
        spin.isZero()
            ? group(epoll, threads, "sparkgate-io")
            : spinning(epoll, threads, "sparkgate-io", spin);
    List<EventLoop> loops = new ArrayList<>();
    workers.forEach(e -> loops.add((EventLoop) e));
    EventLoops started =
        new EventLoops(
            boss,
            workers,
            epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class,
            loops.toArray(EventLoop[]::new),
            epoll ? EpollSocketChannel.class : NioSocketChannel.class,
            backend,
            first);
    started.channels(first);
    return started;
  }

  private ManagedChannel[] channels(String address) {
    ManagedChannel[] channels = backends.get(address);
    if (channels != null) return channels;
    return backends.computeIfAbsent(
        address,
        a -> {
          if (closed) throw new IllegalStateException("stopped");
          ManagedChannel[] built = new ManagedChannel[loops.length];
          for (int i = 0; i < built.length; i++) {
            built[i] = builders.apply(a).eventLoopGroup(loops[i]).channelType(channelType).build();
          }
          return built;
        });
  }

  private static EventLoopGroup group(boolean epoll, int threads, String name) {
    DefaultThreadFactory factory = new DefaultThreadFactory(name, true);
    return epoll
        ? new EpollEventLoopGroup(threads, factory)
        : new NioEventLoopGroup(threads, factory);
  }

  /** Loops that poll for up to {@code spin} before they sleep, each with a strategy of its own. */
  private static EventLoopGroup spinning(boolean epoll, int threads, String name, Duration spin) {
    DefaultThreadFactory factory = new DefaultThreadFactory(name, true);
    return epoll
        ? new EpollEventLoopGroup(threads, factory, () -> new SpinThenSleep(spin))
        : new NioEventLoopGroup(
            threads, factory, SelectorProvider.provider(), () -> new SpinThenSleep(spin));
  }

  /**
   * Serves the proxy's clients on these loops, with {@code acceptor} first in the listening channel's
   * pipeline: it sees each accepted connection before gRPC does, and may close it instead of passing it on.
   */
  public NettyServerBuilder serve(NettyServerBuilder server, Acceptor acceptor) {
    boolean epoll = serverChannelType == EpollServerSocketChannel.class;
    return server
        .bossEventLoopGroup(boss)
        .workerEventLoopGroup(workers)
        .channelFactory(
            () -> {
              ServerChannel channel =
                  epoll ? new EpollServerSocketChannel() : new NioServerSocketChannel();
              channel.pipeline().addLast(acceptor.handler());
              return channel;
            });
  }

  /**
   * The backend channel of the calling thread's loop; from any other thread (a test's executor, a call
   * started off the loops), the next one in turn.
   */
  Channel backendForCurrentThread() {
    return backend(first);
  }

  /** As {@link #backendForCurrentThread()}, to the backend of this {@code host:port}. */
  public Channel backend(String address) {
    ManagedChannel[] channels = channels(address);
    for (int i = 0; i < loops.length; i++) {
      if (loops[i].inEventLoop()) {
        return channels[i];
      }
    }
    return channels[Math.floorMod(next.getAndIncrement(), channels.length)];
  }

  /**
   * The backend at {@code address} is gone for good (an engine that stopped): its channels close once their
   * calls end, and a later use builds new ones.
   */
  void forget(String address) {
    ManagedChannel[] channels = backends.remove(address);
    if (channels == null) return;
    for (ManagedChannel channel : channels) channel.shutdown();
  }

  /** Every connection to {@code address} tries to connect now, if it was waiting out a backoff. */
  void resetBackoff(String address) {
    ManagedChannel[] channels = backends.get(address);
    if (channels == null) return;
    for (ManagedChannel channel : channels) {
      channel.resetConnectBackoff();
    }
  }

  /** The backend calls that name none go to. */
  String firstAddress() {
    return first;
  }

  /** How many backend connections are in each state now (READY is serving; the rest reconnect on demand). */
  public Map<ConnectivityState, Integer> backendStates() {
    Map<ConnectivityState, Integer> out = new EnumMap<>(ConnectivityState.class);
    for (ManagedChannel[] channels : backends.values()) {
      for (ManagedChannel channel : channels) {
        out.merge(channel.getState(false), 1, Integer::sum);
      }
    }
    return out;
  }

  /**
   * Direct memory the transport's buffers hold now, or -1 when Netty does not count it. Netty allocates them
   * outside the JVM's buffer pools, so the JVM's own figures miss them; Netty counts them only in an internal
   * class, which is why the reading is here, next to the transport, rather than in the metrics.
   */
  public static long directMemoryUsed() {
    return PlatformDependent.usedDirectMemory();
  }

  /** Stops the backend channels, then the loops. Call after the server has stopped. */
  @Override
  public void close() {
    closed = true;
    List<ManagedChannel> all = new ArrayList<>();
    backends.values().forEach(c -> all.addAll(List.of(c)));
    for (ManagedChannel channel : all) {
      channel.shutdownNow();
    }
    try {
      for (ManagedChannel channel : all) {
        channel.awaitTermination(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    boss.shutdownGracefully(0, 5, TimeUnit.SECONDS);
    workers.shutdownGracefully(0, 5, TimeUnit.SECONDS);
  }
}
