package io.sparkgate.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class TimestampsTest {
  @Test
  void matchesInstantToStringForEveryFractionShape() {
    long s = Instant.parse("2026-11-30T15:20:20Z").getEpochSecond();
    for (int nano : new int[] {0, 1, 999, 1_000, 10_000, 123_000, 1_000_000, 120_000_000, 100_000_000, 999_999_999,
        174_477_315, 5_000_100}) {
      Instant t = Instant.ofEpochSecond(s, nano);
      assertEquals(t.toString(), Timestamps.iso(t), "nano " + nano);
    }
  }

  @Test
  void matchesInstantToStringAcrossSecondsAndYears() {
    SplittableRandom r = new SplittableRandom(7);
    Instant previous = Instant.parse("2026-11-30T15:20:20.5Z");
    for (int i = 0; i < 100_000; i++) {
      // Mostly close to the previous time (the cached second is reused), sometimes anywhere at all.
      Instant t = i % 10 == 0
          ? Instant.ofEpochSecond(r.nextLong(Instant.MIN.getEpochSecond(), Instant.MAX.getEpochSecond()),
              r.nextInt(1_000_000_000))
          : previous.plusNanos(r.nextLong(3_000_000_000L));
      assertEquals(t.toString(), Timestamps.iso(t));
      previous = t;
    }
    for (String edge : new String[] {"0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z",
        "-0001-12-31T23:59:59Z", "+10000-01-01T00:00:00Z", "1970-01-01T00:00:00Z"}) {
      Instant t = Instant.parse(edge);
      assertEquals(t.toString(), Timestamps.iso(t), edge);
    }
  }
}
