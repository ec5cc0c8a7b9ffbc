package io.sparkgate.admin;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;

/** A handler's {@link AdminResponse} as HTTP, with the headers every answer of the listener carries. */
final class HttpAnswers {
  private HttpAnswers() {}

  /** {@code answer}; for a HEAD request ({@code head}), its headers only. */
  static FullHttpResponse of(AdminResponse answer, boolean head) {
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

  /** The answer to a request without the credentials its path needs. */
  static FullHttpResponse unauthorized() {
    return of(
        AdminResponse.text(401, "send Authorization: Bearer <admin token>\n")
            .withHeader(HttpHeaderNames.WWW_AUTHENTICATE.toString(), "Bearer realm=\"sparkgate\""),
        false);
  }
}
