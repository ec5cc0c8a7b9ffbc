package io.sparkgate.call;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How long each stage held one call: opening it, then each request message (and the end of the stream) passing
 * through it. Kept only for calls whose trace span records, which shows them as events; requests and the span's
 * end are on different threads, hence the lock.
 */
public final class StageTimes {
  private final Map<String, Long> nanos = new LinkedHashMap<>();

  /** Adds {@code elapsed} nanoseconds to {@code stage}'s time. */
  public synchronized void add(String stage, long elapsed) {
    nanos.merge(stage, elapsed, Long::sum);
  }

  /** Each stage's time so far, in nanoseconds, in the order the stages first took time. */
  public synchronized Map<String, Long> snapshot() {
    return new LinkedHashMap<>(nanos);
  }
}
