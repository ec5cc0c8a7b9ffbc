package io.sparkgate.auth;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** Refusals counted per reason; the metrics endpoint shows them. */
final class AuthFailures {
  private final Map<AuthFailure.Reason, LongAdder> counts = new ConcurrentHashMap<>();

  void count(AuthFailure.Reason reason) {
    counts.computeIfAbsent(reason, r -> new LongAdder()).increment();
  }

  Map<AuthFailure.Reason, Long> snapshot() {
    Map<AuthFailure.Reason, Long> out = new EnumMap<>(AuthFailure.Reason.class);
    for (AuthFailure.Reason reason : AuthFailure.Reason.values()) {
      LongAdder n = counts.get(reason);
      out.put(reason, n == null ? 0 : n.sum());
    }
    return out;
  }
}
