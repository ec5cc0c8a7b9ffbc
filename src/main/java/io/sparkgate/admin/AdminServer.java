package io.sparkgate.admin;

import io.grpc.netty.shaded.io.netty.bootstrap.ServerBootstrap;
import io.grpc.netty.shaded.io.netty.buffer.ByteBufUtil;
import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelFuture;
import io.grpc.netty.shaded.io.netty.channel.ChannelFutureListener;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInitializer;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.SimpleChannelInboundHandler;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.SocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.grpc.netty.shaded.io.netty.handler.codec.http.FullHttpRequest;
import io.grpc.netty.shaded.io.netty.handler.codec.http.FullHttpResponse;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpHeaderNames;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpMethod;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpObjectAggregator;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpResponseStatus;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpServerCodec;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpUtil;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpVersion;
import io.grpc.netty.shaded.io.netty.handler.codec.http.QueryStringDecoder;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslHandler;
import io.grpc.netty.shaded.io.netty.handler.timeout.ReadTimeoutHandler;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.sparkgate.config.AdminConfig;
import io.sparkgate.config.TlsConfig;
import io.sparkgate.tls.TlsPolicy;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin listener: HTTP/1.1 (HTTPS with {@code admin.tls}) on Netty's codec, one event loop of its own.
 * Requests are read without blocking, so clients that open connections and never finish a request cannot
 * keep the scraper or a probe out (the JDK's built-in server, tried first, parsed each request on a worker
 * thread and was blocked by them); a connection silent for {@link #READ_TIMEOUT_SECONDS} is closed, and at
 * most {@link #MAX_CONNECTIONS} are open. Handlers run on a small pool of their own, since some ask a backend
 * or Redis.
 *
 * <p>Every path but the open ones (health and readiness) needs the bearer token or a client certificate when
 * the configuration has one. A POST must say {@code Content-Type: application/json}: a browser sends that
 * cross-origin only after a CORS preflight, which this server never approves, so a web page an operator
 * visits cannot act on the proxy through the operator's browser.
 */
public final class AdminServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(AdminServer.class);

  static final int READ_TIMEOUT_SECONDS = 30;

  /**
   * Open connections at most: a scraper, probes and a console need a handful, and the proxy's file descriptors
   * are shared with its clients, so a flood of connections to this port must not use them up.
   */
  static final int MAX_CONNECTIONS = 64;

  private static final int MAX_HEADER_BYTES = 8192;

  /** The largest body: a plan or SQL pasted into the policy playground. */
  private static final int MAX_BODY_BYTES = 1024 * 1024;

  /** Requests a handler pool thread may wait behind; beyond it the listener answers 503 at once. */
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
    private record Entry(boolean open, boolean prefix, AdminHandler handler) {}

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

    private Entry find(String path) {
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
    SslContext ssl = config.tls().map(AdminServer::sslContext).orElse(null);
    EventLoopGroup loop =
        new NioEventLoopGroup(1, new DefaultThreadFactory("sparkgate-admin", true));
    ExecutorService handlers =
        Executors.newFixedThreadPool(
            HANDLER_THREADS, new DefaultThreadFactory("sparkgate-admin-handler", true));
    AtomicInteger open = new AtomicInteger();
    ChannelFuture bound =
        new ServerBootstrap()
            .group(loop)
            .channel(NioServerSocketChannel.class)
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
                            new ReadTimeoutHandler(READ_TIMEOUT_SECONDS, TimeUnit.SECONDS),
                            new HttpServerCodec(4096, MAX_HEADER_BYTES, 8192),
                            new HttpObjectAggregator(MAX_BODY_BYTES),
                            new Requests(config, routes, handlers));
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

  private static SslContext sslContext(TlsConfig tls) {
    try {
      SslContextBuilder b =
          TlsPolicy.apply(
              SslContextBuilder.forServer(tls.certFile().toFile(), tls.keyFile().toFile()));
      if (tls.clientCaFile().isPresent()) {
        // Optional at the handshake: probes (the kubelet's among them) have no certificate and need
        // /healthz and /readyz; every other path then asks for one (or the token).
        b.trustManager(tls.clientCaFile().get().toFile()).clientAuth(ClientAuth.OPTIONAL);
      }
      return b.build();
    } catch (IOException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "admin.tls: cannot use "
              + tls.certFile()
              + " and "
              + tls.keyFile()
              + ": "
              + e.getMessage(),
          e);
    }
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

  /** Answers one request at a time per connection, keeping the connection open when the client asks to. */
  private static final class Requests extends SimpleChannelInboundHandler<FullHttpRequest> {
    private final AdminConfig config;
    private final Routes routes;
    private final ExecutorService handlers;

    Requests(AdminConfig config, Routes routes, ExecutorService handlers) {
      this.config = config;
      this.routes = routes;
      this.handlers = handlers;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
      boolean keepAlive = request.decoderResult().isSuccess() && HttpUtil.isKeepAlive(request);
      if (!request.decoderResult().isSuccess()) {
        respond(ctx, AdminResponse.text(400, "bad request\n"), false, false);
        return;
      }
      QueryStringDecoder uri = new QueryStringDecoder(request.uri());
      Routes.Entry entry = routes.find(uri.path());
      if (entry == null) {
        respond(ctx, AdminResponse.text(404, "not found: " + uri.path() + "\n"), keepAlive, false);
        return;
      }
      String operator = entry.open ? "anyone" : operator(ctx, request);
      if (operator == null) {
        FullHttpResponse r =
            http(AdminResponse.text(401, "send Authorization: Bearer <admin token>\n"), false);
        r.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"sparkgate\"");
        write(ctx, r, keepAlive);
        return;
      }
      HttpMethod method = request.method();
      boolean head = method.equals(HttpMethod.HEAD);
      if (method.equals(HttpMethod.POST) && !json(request)) {
        respond(
            ctx,
            AdminResponse.error(415, "POST requests must send Content-Type: application/json"),
            keepAlive,
            false);
        return;
      }
      byte[] body = ByteBufUtil.getBytes(request.content());
      AdminRequest r =
          new AdminRequest(
              head ? "GET" : method.name(), uri.path(), uri.parameters(), body, operator);
      try {
        handlers.execute(() -> respond(ctx, answer(entry.handler, r), keepAlive, head));
      } catch (RejectedExecutionException stopping) {
        respond(ctx, AdminResponse.text(503, "stopping\n"), false, false);
      }
    }

    private static AdminResponse answer(AdminHandler handler, AdminRequest r) {
      try {
        return handler.handle(r);
      } catch (Exception | Error e) {
        log.warn("admin {} {} failed", r.method(), r.path(), e);
        return AdminResponse.error(500, "failed: see the proxy's log");
      }
    }

    private static boolean json(FullHttpRequest request) {
      String type = request.headers().get(HttpHeaderNames.CONTENT_TYPE);
      return type != null && type.toLowerCase(Locale.ROOT).startsWith("application/json");
    }

    /** Who is asking, or null when the request does not carry the credentials this listener needs. */
    private String operator(ChannelHandlerContext ctx, FullHttpRequest request) {
      SslHandler ssl = ctx.pipeline().get(SslHandler.class);
      if (ssl != null && config.clientCaFile().isPresent()) {
        try {
          Certificate[] chain = ssl.engine().getSession().getPeerCertificates();
          if (chain.length > 0 && chain[0] instanceof X509Certificate x) {
            return x.getSubjectX500Principal().getName();
          }
        } catch (SSLPeerUnverifiedException noCertificate) {
          // the token may still do
        }
      }
      if (config.token().isPresent()) {
        String header = request.headers().get(HttpHeaderNames.AUTHORIZATION);
        String prefix = "Bearer ";
        if (header == null || !header.regionMatches(true, 0, prefix, 0, prefix.length())) {
          return null;
        }
        byte[] sent = header.substring(prefix.length()).strip().getBytes(StandardCharsets.UTF_8);
        byte[] expected = config.token().get().reveal().getBytes(StandardCharsets.UTF_8);
        return MessageDigest.isEqual(sent, expected) ? "token" : null;
      }
      return config.requiresCredentials() ? null : "loopback";
    }

    private static void respond(
        ChannelHandlerContext ctx, AdminResponse answer, boolean keepAlive, boolean head) {
      write(ctx, http(answer, head), keepAlive);
    }

    private static FullHttpResponse http(AdminResponse answer, boolean head) {
      FullHttpResponse r =
          new DefaultFullHttpResponse(
              HttpVersion.HTTP_1_1,
              HttpResponseStatus.valueOf(answer.status()),
              head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(answer.body()));
      r.headers()
          .set(HttpHeaderNames.CONTENT_TYPE, answer.contentType())
          .setInt(HttpHeaderNames.CONTENT_LENGTH, answer.body().length)
          // Nothing here may be cached by a browser or framed by another site's page.
          .set(HttpHeaderNames.CACHE_CONTROL, "no-store")
          .set("X-Content-Type-Options", "nosniff")
          .set("X-Frame-Options", "DENY");
      answer.headers().forEach((name, value) -> r.headers().set(name, value));
      if (answer.status() == 405 && !r.headers().contains(HttpHeaderNames.ALLOW)) {
        r.headers().set(HttpHeaderNames.ALLOW, "GET, HEAD");
      }
      return r;
    }

    private static void write(ChannelHandlerContext ctx, FullHttpResponse r, boolean keepAlive) {
      HttpUtil.setKeepAlive(r, keepAlive);
      ChannelFuture written = ctx.writeAndFlush(r);
      if (!keepAlive) {
        written.addListener(ChannelFutureListener.CLOSE);
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      // Read timeouts, resets, failed handshakes and oversized requests: the connection goes.
      log.debug("admin connection closed: {}", cause.toString());
      ctx.close();
    }
  }
}
