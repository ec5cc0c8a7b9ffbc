package io.sparkgate.inspect;

/** What the inspect stage tells a session tracker about a request Spark answered. */
final class Answered {
  private Answered() {}

  /** A request with these facts was forwarded and Spark answered it successfully. */
  static void request(SessionTracker tracker, String userId, String sessionId, Facts facts) {
    tracker.apply(tracker.changes("ExecutePlan", userId, sessionId, facts));
  }
}
