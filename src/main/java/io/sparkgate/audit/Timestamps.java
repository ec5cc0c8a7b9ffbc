package io.sparkgate.audit;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * Record times in exactly {@link Instant#toString()}'s form ({@code 2026-11-30T15:20:20.174477315Z}: the
 * fraction in groups of three digits, none when zero). Going through {@code DateTimeFormatter} for every record
 * was a visible share of an audit record's cost; calls end in about time order, so the part up to the second is
 * formatted once per second and reused (by any thread: each cached second is immutable).
 */
final class Timestamps {
  private static final DateTimeFormatter SECONDS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss").withZone(ZoneOffset.UTC);
  /** Years outside 0000-9999 take a sign or more digits; those are left to Instant itself. */
  private static final long FIRST = Instant.parse("0000-01-01T00:00:00Z").getEpochSecond();
  private static final long LAST = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();

  private record Second(long epochSecond, String text) {}

  private static volatile Second last = new Second(Long.MIN_VALUE, "");

  private Timestamps() {}

  static String iso(Instant t) {
    long s = t.getEpochSecond();
    if (s < FIRST || s > LAST) {
      return t.toString();
    }
    Second cached = last;
    if (cached.epochSecond() != s) {
      cached = new Second(s, SECONDS.format(t));
      last = cached;
    }
    int nano = t.getNano();
    StringBuilder b = new StringBuilder(cached.text().length() + 11).append(cached.text());
    if (nano != 0) {
      int digits;
      int value;
      if (nano % 1_000_000 == 0) {
        digits = 3;
        value = nano / 1_000_000;
      } else if (nano % 1_000 == 0) {
        digits = 6;
        value = nano / 1_000;
      } else {
        digits = 9;
        value = nano;
      }
      b.append('.');
      String v = Integer.toString(value);
      for (int i = v.length(); i < digits; i++) {
        b.append('0');
      }
      b.append(v);
    }
    return b.append('Z').toString();
  }
}
