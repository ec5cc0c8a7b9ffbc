package io.sparkgate.admin;

import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.TooLongHttpContentException;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection's requests and answers, one exchange at a time: a request goes to the handler pool, and the
 * connection reads again only once its answer is written, so answers leave in the order their requests came
 * (pipelined ones too) and a client cannot pile work up. A connection not ready with a whole request within
 * the request timeout, from when it opened or its last answer was written, is closed: a slow or silent client
 * holds a connection for that long at most.
 *
 * <p>Threading: every field is the connection's event loop's; handlers run on the pool and hand their answer
 * back to the loop by writing it.
 */
final class Exchanges extends ChannelInboundHandlerAdapter {
  private static final Logger log = LoggerFactory.getLogger(Exchanges.class);

  /** What every connection of one listener shares. */
  record Settings(
      AdminServer.Routes routes,
      Credentials credentials,
      ExecutorService handlers,
      Duration requestTimeout) {}

  private final Settings settings;

  /** Requests decoded while one was being answered: the rest of what one read brought. */
  private final ArrayDeque<FullHttpRequest> waiting = new ArrayDeque<>();

  private boolean answering;
  private ScheduledFuture<?> deadline;

  Exchanges(Settings settings) {
    this.settings = settings;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    awaitRequest(ctx);
    ctx.fireChannelActive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof FullHttpRequest request)) {
      ReferenceCountUtil.release(msg);
      return;
    }
    waiting.add(request);
    if (!answering) {
      next(ctx);
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    cancelDeadline();
    waiting.forEach(ReferenceCountUtil::release);
    waiting.clear();
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    // Resets, failed handshakes and the like: the connection goes.
    log.debug("admin connection closed: {}", cause.toString());
    ctx.close();
  }

  /** Answers the first waiting request, or reads for one. */
  private void next(ChannelHandlerContext ctx) {
    FullHttpRequest request = waiting.poll();
    if (request == null) {
      awaitRequest(ctx);
      return;
    }
    cancelDeadline();
    answering = true;
    try {
      start(ctx, request);
    } finally {
      request.release();
    }
  }

  private void start(ChannelHandlerContext ctx, FullHttpRequest request) {
    if (!request.decoderResult().isSuccess()) {
      boolean tooLarge = request.decoderResult().cause() instanceof TooLongHttpContentException;
      answer(
          ctx,
          tooLarge
              ? AdminResponse.text(
                  413, "a body is " + AdminServer.MAX_BODY_BYTES + " bytes at most\n")
              : AdminResponse.text(400, "bad request\n"),
          false,
          false);
      return;
    }
    boolean keepAlive = HttpUtil.isKeepAlive(request);
    QueryStringDecoder uri = new QueryStringDecoder(request.uri());
    AdminServer.Routes.Entry entry = settings.routes().find(uri.path());
    if (entry == null) {
      answer(ctx, AdminResponse.text(404, "not found: " + uri.path() + "\n"), keepAlive, false);
      return;
    }
    String operator =
        entry.open()
            ? "anyone"
            : settings
                .credentials()
                .operator(tls(ctx), request.headers().get(HttpHeaderNames.AUTHORIZATION));
    if (operator == null) {
      send(ctx, HttpAnswers.unauthorized(), keepAlive);
      return;
    }
    HttpMethod method = request.method();
    boolean head = method.equals(HttpMethod.HEAD);
    if (method.equals(HttpMethod.POST) && !json(request)) {
      answer(
          ctx,
          AdminResponse.error(415, "POST requests must send Content-Type: application/json"),
          keepAlive,
          false);
      return;
    }
    AdminRequest r =
        new AdminRequest(
            head ? "GET" : method.name(),
            uri.path(),
            uri.parameters(),
            ByteBufUtil.getBytes(request.content()),
            operator);
    try {
      settings.handlers().execute(() -> answer(ctx, handle(entry.handler(), r), keepAlive, head));
    } catch (RejectedExecutionException stopping) {
      answer(ctx, AdminResponse.text(503, "stopping\n"), false, false);
    }
  }

  private static AdminResponse handle(AdminHandler handler, AdminRequest r) {
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

  private static SSLSession tls(ChannelHandlerContext ctx) {
    SslHandler ssl = ctx.pipeline().get(SslHandler.class);
    return ssl == null ? null : ssl.engine().getSession();
  }

  private void answer(
      ChannelHandlerContext ctx, AdminResponse answer, boolean keepAlive, boolean head) {
    send(ctx, HttpAnswers.of(answer, head), keepAlive);
  }

  /** Writes {@code response} (from any thread), then closes or goes on with the next request on the loop. */
  private void send(ChannelHandlerContext ctx, FullHttpResponse response, boolean keepAlive) {
    HttpUtil.setKeepAlive(response, keepAlive);
    ctx.writeAndFlush(response)
        .addListener(
            written -> {
              if (!keepAlive || !written.isSuccess()) {
                ctx.close();
                return;
              }
              answering = false;
              next(ctx);
            });
  }

  private void awaitRequest(ChannelHandlerContext ctx) {
    if (deadline == null) {
      long nanos = settings.requestTimeout().toNanos();
      deadline = ctx.executor().schedule(() -> tooSlow(ctx), nanos, TimeUnit.NANOSECONDS);
    }
    ctx.read();
  }

  private void tooSlow(ChannelHandlerContext ctx) {
    deadline = null;
    if (!answering) {
      log.debug(
          "admin connection closed: no whole request within {} s",
          settings.requestTimeout().toSeconds());
      ctx.close();
    }
  }

  private void cancelDeadline() {
    if (deadline != null) {
      deadline.cancel(false);
      deadline = null;
    }
  }
}
