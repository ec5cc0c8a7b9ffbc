package io.sparkgate.auth;

import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** One fake time source for both the wall clock (token validity, JWKS TTL) and the cache's ticker. */
final class FakeTime extends Clock implements Ticker {
  private volatile Instant now = Instant.parse("2026-03-01T12:00:00Z");
  private final long nanoBase = 1_000_000_000L;

  void advance(Duration d) {
    now = now.plus(d);
  }

  @Override
  public Instant instant() {
    return now;
  }

  @Override
  public long read() {
    return nanoBase + Duration.between(Instant.parse("2026-03-01T12:00:00Z"), now).toNanos();
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
