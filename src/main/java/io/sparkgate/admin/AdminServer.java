package io.sparkgate.admin;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sparkgate.config.AdminConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin listener: HTTP/1.1 (HTTPS with {@code admin.tls}) on Netty's codec, one event loop of its own.
 * Requests are read without blocking, so clients that open connections and never finish a request cannot
 * keep the scraper or a probe out (the JDK's built-in server, tried first, parsed each request on a worker
 * thread and was blocked by them); a connection that has not sent a whole request within {@link
 * #REQUEST_TIMEOUT} of being ready for one is closed, and at most {@link #MAX_CONNECTIONS} are open. Handlers
 * run on a small pool of their own, since some ask a backend or Redis.
 *
 * <p>Every path but the open ones (health and readiness) needs the bearer token or a client certificate when
 * the configuration has one. A POST must say {@code Content-Type: application/json}: a browser sends that
 * cross-origin only after a CORS preflight, which this server never approves, so a web page an operator
 * visits cannot act on the proxy through the operator's browser.
 *
 * <p>Netty here is Netty's own artifact, not grpc-netty-shaded's relocated copy: that is gRPC's private
 * transport, and only the gRPC listener (io.sparkgate.forward, io.sparkgate.tls) builds on it.
 */
public final class AdminServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(AdminServer.class);

  /** How long a connection has to send a whole request: from when it opens, and after each answer. */
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

  /**
   * Open connections at most: a scraper, probes and a console need a handful, and the proxy's file descriptors
   * are shared with its clients, so a flood of connections to this port must not use them up.
   */
  static final int MAX_CONNECTIONS = 64;

  private static final int MAX_LINE_BYTES = 4096;
  private static final int MAX_HEADER_BYTES = 8192;

  /** The largest body: a plan or SQL pasted into the policy playground. */
  static final int MAX_BODY_BYTES = 1024 * 1024;

  /**
   * Threads answering requests. Each connection has at most one request with them at a time, so their queue
   * holds at most {@link #MAX_CONNECTIONS}.
   */
  private static final int HANDLER_THREADS = 2;

  private final EventLoopGroup loop;
  private final ExecutorService handlers;
  private final Channel server;

  private AdminServer(EventLoopGroup loop, ExecutorService handlers, Channel server) {
    this.loop = loop;
    this.handlers = handlers;
    this.server = server;
  }

  /** The paths of one admin listener and what answers them. */
  public static final class Routes {
    record Entry(boolean open, boolean prefix, AdminHandler handler) {}

    private final Map<String, Entry> entries = new LinkedHashMap<>();

    /**
     * {@code path} answered without credentials: probes, which must show nothing but pass/fail, and the
     * console's static files, which hold no data (the page asks the API, with credentials, for everything).
     */
    public Routes open(String path, AdminHandler handler) {
      return add(path, new Entry(true, false, handler));
    }

    /** {@code path} exactly, for authenticated operators. */
    public Routes exact(String path, AdminHandler handler) {
      return add(path, new Entry(false, false, handler));
    }

    /** Every path starting with {@code prefix} (which ends with a slash), for authenticated operators. */
    public Routes prefix(String prefix, AdminHandler handler) {
      if (!prefix.endsWith("/")) throw new IllegalArgumentException("prefix must end with /");
      return add(prefix, new Entry(false, true, handler));
    }

    private Routes add(String path, Entry entry) {
      if (entries.putIfAbsent(path, entry) != null) {
        throw new IllegalArgumentException("two handlers for " + path);
      }
      return this;
    }

    Entry find(String path) {
      Entry exact = entries.get(path);
      if (exact != null && !exact.prefix) return exact;
      Entry best = null;
      int bestLength = -1;
      for (var e : entries.entrySet()) {
        if (e.getValue().prefix
            && path.startsWith(e.getKey())
            && e.getKey().length() > bestLength) {
          best = e.getValue();
          bestLength = e.getKey().length();
        }
      }
      return best;
    }
  }

  /** Binds the listener {@code config} describes and serves {@code routes} on it. */
  public static AdminServer start(AdminConfig config, Routes routes) throws IOException {
    return start(config, routes, REQUEST_TIMEOUT);
  }

  /** As {@link #start(AdminConfig, Routes)}, giving each connection {@code requestTimeout} per request. */
  static AdminServer start(AdminConfig config, Routes routes, Duration requestTimeout)
      throws IOException {
    SslContext ssl = config.tls().map(AdminTls::sslContext).orElse(null);
    EventLoopGroup loop =
        new MultiThreadIoEventLoopGroup(
            1, new DefaultThreadFactory("sparkgate-admin", true), NioIoHandler.newFactory());
    ExecutorService handlers =
        Executors.newFixedThreadPool(
            HANDLER_THREADS, new DefaultThreadFactory("sparkgate-admin-handler", true));
    Exchanges.Settings settings =
        new Exchanges.Settings(routes, new Credentials(config), handlers, requestTimeout);
    AtomicInteger open = new AtomicInteger();
    ChannelFuture bound =
        new ServerBootstrap()
            .group(loop)
            .channel(NioServerSocketChannel.class)
            // Read only when ready for the next request (Exchanges): a client cannot queue up work.
            .childOption(ChannelOption.AUTO_READ, false)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    if (open.incrementAndGet() > MAX_CONNECTIONS) {
                      open.decrementAndGet();
                      ch.close();
                      return;
                    }
                    ch.closeFuture().addListener(f -> open.decrementAndGet());
                    if (ssl != null) {
                      ch.pipeline().addLast(ssl.newHandler(ch.alloc()));
                    }
                    ch.pipeline()
                        .addLast(
                            new HttpServerCodec(MAX_LINE_BYTES, MAX_HEADER_BYTES, 8192),
                            new BodyLimit(MAX_BODY_BYTES),
                            new Exchanges(settings));
                  }
                })
            .bind(config.address(), config.port())
            .awaitUninterruptibly();
    if (!bound.isSuccess()) {
      loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      handlers.shutdownNow();
      Throwable cause = bound.cause();
      throw new IOException(
          "cannot serve the admin listener on "
              + config.address()
              + ":"
              + config.port()
              + ": "
              + (cause.getMessage() == null ? cause.toString() : cause.getMessage()),
          cause);
    }
    AdminServer s = new AdminServer(loop, handlers, bound.channel());
    log.info(
        "admin listener at {}://{}:{} ({})",
        ssl != null ? "https" : "http",
        config.address(),
        s.port(),
        config.requiresCredentials() ? "credentials required" : "loopback, no credentials");
    return s;
  }

  /** The bound port (the configured one, or the one picked for port 0). */
  public int port() {
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  @Override
  public void close() {
    server.close().awaitUninterruptibly();
    handlers.shutdownNow();
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
  }
}
