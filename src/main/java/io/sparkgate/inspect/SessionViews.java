package io.sparkgate.inspect;

/**
 * The session a request runs in, as the inspector should see it, looked up by the request's own head once it
 * is decoded: the inspector reads the head and the plan in one pass. {@link SessionTracker} is one.
 */
@FunctionalInterface
public interface SessionViews {
  /** {@code userId} and {@code sessionId} are empty when the request has none. */
  SessionView view(String userId, String sessionId);

  /** Every request in the same session. */
  static SessionViews fixed(SessionView view) {
    SessionView v = view == null ? SessionView.DEFAULT : view;
    return (userId, sessionId) -> v;
  }
}
