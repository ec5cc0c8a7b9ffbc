package io.sparkgate.admin;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.TooLongHttpContentException;

/**
 * Gathers each request with its body, of at most {@code maxBytes}. A larger one is passed on bodiless, marked
 * as too long, to be answered 413 in its turn like any other request (Netty's own answer would be written at
 * once, ahead of answers still due to requests sent before it); its body is never read.
 */
final class BodyLimit extends HttpObjectAggregator {
  BodyLimit(int maxBytes) {
    super(maxBytes);
  }

  @Override
  protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
    if (!(oversized instanceof HttpRequest r)) {
      ctx.close();
      return;
    }
    FullHttpRequest tooLong =
        new DefaultFullHttpRequest(r.protocolVersion(), r.method(), r.uri(), Unpooled.EMPTY_BUFFER);
    tooLong.headers().set(r.headers());
    tooLong.setDecoderResult(
        DecoderResult.failure(new TooLongHttpContentException("body over " + maxContentLength())));
    ctx.fireChannelRead(tooLong);
  }
}
