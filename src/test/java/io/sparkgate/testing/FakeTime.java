package io.sparkgate.testing;

import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * One fake time source for both the wall clock (token validity, JWKS TTL, audit rotation) and the ticker that
 * measures intervals (the token cache, the audit writer's linger and group commit). Time moves only when a test
 * calls {@link #advance}.
 */
public final class FakeTime extends Clock implements Ticker {
  private static final Instant START = Instant.parse("2026-03-01T12:00:00Z");
  private volatile Instant now = START;
  private final long nanoBase = 1_000_000_000L;

  public void advance(Duration d) {
    now = now.plus(d);
  }

  @Override
  public Instant instant() {
    return now;
  }

  @Override
  public long read() {
    return nanoBase + Duration.between(START, now).toNanos();
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }
}
