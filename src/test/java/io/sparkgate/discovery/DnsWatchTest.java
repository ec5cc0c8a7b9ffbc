package io.sparkgate.discovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.config.BackendConfig;
import io.sparkgate.config.BackendProfileConfig;
import io.sparkgate.config.DnsBackendConfig;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** One dns entry's answers over time: a failed or empty lookup keeps the last good answer, and is counted. */
final class DnsWatchTest {
  private static final DnsBackendConfig ENTRY =
      new DnsBackendConfig(
          "spark.test",
          OptionalInt.of(15002),
          Duration.ofSeconds(1),
          List.of(),
          new BackendConfig(
              "spark.test", 15002, Optional.empty(), BackendProfileConfig.defaults()));

  /** Answers as scripted: a set of addresses, or null for a failure. */
  private static final class Scripted implements DnsLookup {
    final Deque<Set<String>> answers = new ArrayDeque<>();

    void then(String... addresses) {
      answers.add(Set.of(addresses));
    }

    void thenFails() {
      answers.add(Set.of("FAIL"));
    }

    @Override
    public SortedSet<String> backends(DnsBackendConfig entry) throws DnsFailure {
      Set<String> next = answers.remove();
      if (next.contains("FAIL"))
        throw new DnsFailure("no answer from [127.0.0.1:53] for spark.test", null);
      return new TreeSet<>(next);
    }
  }

  private final Scripted dns = new Scripted();
  private final DnsWatch watch =
      new DnsWatch("analytics", ENTRY, dns, Clock.fixed(Instant.EPOCH, ZoneOffset.UTC));

  @Test
  void beforeTheFirstAnswer_noBackends_andTheStatusSaysWhy() {
    assertEquals("spark.test:15002: not asked yet", watch.status());
    dns.thenFails();
    assertEquals(Set.of(), watch.refresh());
    assertTrue(watch.failing());
    assertEquals(
        "spark.test:15002: no answer yet (no answer from [127.0.0.1:53] for spark.test)",
        watch.status());
    assertEquals(1, watch.count(DnsWatch.Result.ERROR));
  }

  @Test
  void eachAnswer_replacesTheLast_andFailuresAndEmptyAnswersKeepIt() {
    dns.then("10.0.0.1:15002");
    dns.then("10.0.0.1:15002", "10.0.0.2:15002");
    dns.thenFails();
    dns.then();
    dns.then("10.0.0.2:15002");
    assertEquals(Set.of("10.0.0.1:15002"), watch.refresh());
    assertEquals(Set.of("10.0.0.1:15002", "10.0.0.2:15002"), watch.refresh());
    assertEquals(Set.of("10.0.0.1:15002", "10.0.0.2:15002"), watch.refresh());
    assertTrue(watch.status().contains("keeping the last answer, 2 backend(s)"), watch.status());
    assertEquals(Set.of("10.0.0.1:15002", "10.0.0.2:15002"), watch.refresh());
    assertTrue(watch.status().contains("has no records"), watch.status());
    assertEquals(Set.of("10.0.0.2:15002"), watch.refresh());
    assertFalse(watch.failing());
    assertEquals("spark.test:15002: 1 backend(s)", watch.status());
    assertEquals(3, watch.count(DnsWatch.Result.OK));
    assertEquals(1, watch.count(DnsWatch.Result.EMPTY));
    assertEquals(1, watch.count(DnsWatch.Result.ERROR));
  }
}
