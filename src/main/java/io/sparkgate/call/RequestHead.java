package io.sparkgate.call;

import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;

/**
 * Who and what a request names, as the inspect stage decoded it from the call's first request message: the
 * session and operation it addresses, the client that sent it, and the user it declared (after the
 * authenticate stage stamped it: the principal's name when authentication is on). Empty strings where the
 * request has no such field.
 */
public record RequestHead(
    String sessionId,
    String userId,
    String operationId,
    String clientType,
    String observedServerSessionId,
    String newSessionId) {
  /** Before any request message was inspected. */
  public static final RequestHead NONE = new RequestHead("", "", "", "", "", "");

  /** The head the REQUEST fact of {@code facts} describes; NONE when the request could not be read. */
  public static RequestHead of(Facts facts) {
    for (Fact f : facts.ofKind(Fact.Kind.REQUEST)) {
      return new RequestHead(
          attr(f, "session_id"),
          attr(f, "user_id"),
          attr(f, "operation_id"),
          attr(f, "client_type"),
          attr(f, "client_observed_server_side_session_id"),
          attr(f, "new_session_id"));
    }
    return NONE;
  }

  private static String attr(Fact f, String name) {
    String v = f.get(name);
    return v == null ? "" : v;
  }
}
