package io.sparkgate.auth;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** Refusals counted per reason; the metrics issue will export these. */
final class AuthFailures {
  private final Map<AuthFailure.Reason, LongAdder> counts = new ConcurrentHashMap<>();

  void count(AuthFailure.Reason reason) {
    counts.computeIfAbsent(reason, r -> new LongAdder()).increment();
  }

  Map<AuthFailure.Reason, Long> snapshot() {
    Map<AuthFailure.Reason, Long> out = new EnumMap<>(AuthFailure.Reason.class);
    counts.forEach((reason, n) -> out.put(reason, n.sum()));
    return out;
  }
}
