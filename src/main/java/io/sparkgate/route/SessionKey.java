package io.sparkgate.route;

import java.util.Objects;

/**
 * A Spark Connect session as the server keys it: the user (the verified principal's name, which the
 * authenticate stage stamps into every request as {@code user_id}) and the client's {@code session_id}.
 */
public record SessionKey(String userId, String sessionId) {
  public SessionKey {
    Objects.requireNonNull(userId, "userId");
    Objects.requireNonNull(sessionId, "sessionId");
  }

  /** The key in a shared store: the user's name cannot contain the separator's meaning twice. */
  String storeKey() {
    return "sparkgate:session:" + userId.length() + ":" + userId + ":" + sessionId;
  }
}
