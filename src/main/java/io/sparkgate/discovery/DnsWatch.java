package io.sparkgate.discovery;

import io.sparkgate.config.DnsBackendConfig;
import java.time.Clock;
import java.time.Instant;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code dns:} entry of a pool: asks DNS every refresh and keeps the last good answer. A failure or an
 * empty answer keeps it (a resolver hiccup, or every pod briefly unready, must not empty a pool whose servers
 * still hold sessions), is counted, and is logged once per change, not on every refresh.
 *
 * <p>Threading: {@link #refresh} runs on the discovery thread only; the getters read volatile state.
 */
final class DnsWatch {
  private static final Logger log = LoggerFactory.getLogger(DnsWatch.class);

  /** How one lookup ended: the {@code result} label of {@code sparkgate_dns_lookups_total}. */
  enum Result {
    /** Records: the answer in force from now. */
    OK,
    /** No records (NXDOMAIN or no data): the last answer is kept. */
    EMPTY,
    /** No answer or an error answer (timeout, SERVFAIL, refused): the last answer is kept. */
    ERROR
  }

  private final String pool;
  private final DnsBackendConfig entry;
  private final DnsLookup lookup;
  private final Clock clock;
  private final LongAdder[] counts = {new LongAdder(), new LongAdder(), new LongAdder()};

  private volatile SortedSet<String> answer; // null before the first good answer
  private volatile Result last; // null before the first lookup
  private volatile String problem = ""; // why the last lookup was not OK
  private volatile Instant lastGood; // null before the first good answer
  private volatile Instant problemSince;

  DnsWatch(String pool, DnsBackendConfig entry, DnsLookup lookup, Clock clock) {
    this.pool = pool;
    this.entry = entry;
    this.lookup = lookup;
    this.clock = clock;
  }

  String pool() {
    return pool;
  }

  DnsBackendConfig entry() {
    return entry;
  }

  /**
   * Asks DNS once.
   *
   * @return the answer now in force (the last good one unless this lookup was one), empty before any
   */
  Set<String> refresh() {
    Result result;
    String why = "";
    SortedSet<String> found;
    try {
      found = lookup.backends(entry);
      result = found.isEmpty() ? Result.EMPTY : Result.OK;
      if (found.isEmpty()) why = "the answer for " + entry.source() + " has no records";
    } catch (DnsLookup.DnsFailure e) {
      found = null;
      result = Result.ERROR;
      why = e.getMessage();
    } catch (RuntimeException e) {
      found = null;
      result = Result.ERROR;
      why = "lookup of " + entry.source() + " failed: " + e;
    }
    counts[result.ordinal()].increment();
    Result before = last;
    String whyBefore = problem;
    last = result;
    if (result == Result.OK) {
      lastGood = clock.instant();
      problem = "";
      problemSince = null;
      if (before != null && before != Result.OK) {
        log.info("DNS answers again for pool {} ({}): {}", pool, entry, found);
      }
      if (!found.equals(answer)) {
        log.info("DNS names {} backend(s) of pool {} ({}): {}", found.size(), pool, entry, found);
        answer = new TreeSet<>(found);
      }
    } else {
      problem = why;
      if (before != result || !why.equals(whyBefore)) {
        problemSince = clock.instant();
        SortedSet<String> kept = answer;
        log.warn(
            "DNS for pool {} ({}): {}; {}",
            pool,
            entry,
            why,
            kept == null
                ? "the pool has no backend from it until DNS answers"
                : "keeping the last answer " + kept);
      }
    }
    SortedSet<String> now = answer;
    return now == null ? Set.of() : now;
  }

  /** Lookups that ended as {@code result} since start. */
  long count(Result result) {
    return counts[result.ordinal()].sum();
  }

  /** The answer in force: the backends last named; empty before the first good answer. */
  Set<String> answer() {
    SortedSet<String> now = answer;
    return now == null ? Set.of() : now;
  }

  /** One line on where this entry stands, for readiness and the admin API. */
  String status() {
    Result r = last;
    SortedSet<String> now = answer;
    String kept = now == null ? "" : now.size() + " backend(s)";
    if (r == null) return entry.source() + ": not asked yet";
    if (r == Result.OK) return entry.source() + ": " + kept;
    if (now == null) return entry.source() + ": no answer yet (" + problem + ")";
    return entry.source()
        + ": keeping the last answer, "
        + kept
        + " from "
        + lastGood
        + " ("
        + problem
        + " since "
        + problemSince
        + ")";
  }

  /** Whether the last lookup failed or was empty. */
  boolean failing() {
    Result r = last;
    return r != null && r != Result.OK;
  }
}
