package io.sparkgate.auth;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** Refusals counted per reason; the metrics endpoint shows them. */
final class AuthFailures {
  /** One adder per reason, made up front: the map never changes after construction, so reads need no lock. */
  private final Map<AuthFailure.Reason, LongAdder> counts = new EnumMap<>(AuthFailure.Reason.class);

  AuthFailures() {
    for (AuthFailure.Reason reason : AuthFailure.Reason.values()) {
      counts.put(reason, new LongAdder());
    }
  }

  void count(AuthFailure.Reason reason) {
    counts.get(reason).increment();
  }

  Map<AuthFailure.Reason, Long> snapshot() {
    Map<AuthFailure.Reason, Long> out = new EnumMap<>(AuthFailure.Reason.class);
    counts.forEach((reason, n) -> out.put(reason, n.sum()));
    return out;
  }
}
