package io.sparkgate.metrics;

import io.grpc.netty.shaded.io.netty.bootstrap.ServerBootstrap;
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
import io.grpc.netty.shaded.io.netty.handler.timeout.ReadTimeoutHandler;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP side of the metrics: GET (or HEAD) on one path answers with the scrape; any other path is 404 and
 * any other method 405. Netty's HTTP/1.1 codec on one event loop of its own: requests are read without
 * blocking, so clients that open connections and never finish a request cannot keep the scraper out (the
 * JDK's built-in server, tried first, parses each request on a worker thread and was blocked by them); a
 * connection silent for {@link #READ_TIMEOUT_SECONDS} is closed, and at most {@link #MAX_CONNECTIONS} are open.
 */
final class MetricsEndpoint implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(MetricsEndpoint.class);

  /** Prometheus's text exposition format. */
  static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  static final int READ_TIMEOUT_SECONDS = 30;

  /**
   * Open connections at most: a scraper needs one or two, and the proxy's file descriptors are shared with its
   * clients, so a flood of connections to this port must not use them up. Connections beyond it are closed.
   */
  static final int MAX_CONNECTIONS = 64;

  /** A scrape request is a line and a few headers; a body is never needed. */
  private static final int MAX_HEADER_BYTES = 8192;

  private static final int MAX_BODY_BYTES = 8192;

  private final EventLoopGroup loop;
  private final Channel server;

  private MetricsEndpoint(EventLoopGroup loop, Channel server) {
    this.loop = loop;
    this.server = server;
  }

  static MetricsEndpoint start(String address, int port, String path, Supplier<String> scrape)
      throws IOException {
    EventLoopGroup loop =
        new NioEventLoopGroup(1, new DefaultThreadFactory("sparkgate-metrics", true));
    AtomicInteger open =
        new AtomicInteger(); // touched on the one event loop only; atomic for the closeFuture
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
                    ch.pipeline()
                        .addLast(
                            new ReadTimeoutHandler(READ_TIMEOUT_SECONDS, TimeUnit.SECONDS),
                            new HttpServerCodec(4096, MAX_HEADER_BYTES, 8192),
                            new HttpObjectAggregator(MAX_BODY_BYTES),
                            new Scrapes(path, scrape));
                  }
                })
            .bind(address, port)
            .awaitUninterruptibly();
    if (!bound.isSuccess()) {
      loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      Throwable cause = bound.cause();
      throw new IOException(
          cause.getMessage() == null ? cause.toString() : cause.getMessage(), cause);
    }
    return new MetricsEndpoint(loop, bound.channel());
  }

  /** The bound port (the configured one, or the one picked for port 0). */
  int port() {
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  @Override
  public void close() {
    server.close().awaitUninterruptibly();
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
  }

  /** Answers one request at a time per connection, keeping the connection open when the client asks to. */
  private static final class Scrapes extends SimpleChannelInboundHandler<FullHttpRequest> {
    private final String path;
    private final Supplier<String> scrape;

    Scrapes(String path, Supplier<String> scrape) {
      this.path = path;
      this.scrape = scrape;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
      boolean keepAlive = request.decoderResult().isSuccess() && HttpUtil.isKeepAlive(request);
      FullHttpResponse response = answer(request);
      HttpUtil.setKeepAlive(response, keepAlive);
      ChannelFuture written = ctx.writeAndFlush(response);
      if (!keepAlive) {
        written.addListener(ChannelFutureListener.CLOSE);
      }
    }

    private FullHttpResponse answer(FullHttpRequest request) {
      if (!request.decoderResult().isSuccess()) {
        return text(HttpResponseStatus.BAD_REQUEST, "bad request\n");
      }
      HttpMethod method = request.method();
      if (!new QueryStringDecoder(request.uri()).path().equals(path)) {
        return text(HttpResponseStatus.NOT_FOUND, "not found: metrics are at " + path + "\n");
      }
      if (!method.equals(HttpMethod.GET) && !method.equals(HttpMethod.HEAD)) {
        FullHttpResponse r = text(HttpResponseStatus.METHOD_NOT_ALLOWED, "use GET\n");
        r.headers().set(HttpHeaderNames.ALLOW, "GET, HEAD");
        return r;
      }
      byte[] body = scrape.get().getBytes(StandardCharsets.UTF_8);
      boolean head = method.equals(HttpMethod.HEAD);
      FullHttpResponse r =
          new DefaultFullHttpResponse(
              HttpVersion.HTTP_1_1,
              HttpResponseStatus.OK,
              head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body));
      r.headers()
          .set(HttpHeaderNames.CONTENT_TYPE, CONTENT_TYPE)
          .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
      return r;
    }

    private static FullHttpResponse text(HttpResponseStatus status, String text) {
      byte[] body = text.getBytes(StandardCharsets.UTF_8);
      FullHttpResponse r =
          new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(body));
      r.headers()
          .set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
          .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
      return r;
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      // Read timeouts, resets and oversized requests: the connection goes, the endpoint stays.
      log.debug("metrics connection closed: {}", cause.toString());
      ctx.close();
    }
  }
}
