package io.sparkgate.testing;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Waits for something another thread does (an audit writer, a server's event loop, a child process): polls
 * until it holds and returns at once, or fails at the deadline saying what it waited for and what it last saw.
 * The deadline is a safety net against a hang, never the thing under test: a test that needs "this did not
 * happen" must find an event after which it could no longer happen, not wait and look.
 */
public final class Await {
  /** Far beyond what anything the tests wait for takes, even on a loaded two-core machine. */
  public static final Duration TIMEOUT = Duration.ofSeconds(30);

  /**
   * The net under a computation that takes seconds (a parser over hostile text, say): ten times what it takes
   * on a loaded machine and more, so that only a hang or super-linear work reaches it. Never a speed limit.
   */
  public static final Duration HANG = Duration.ofMinutes(5);

  private static final long FIRST_PAUSE_MILLIS = 1;
  private static final long LONGEST_PAUSE_MILLIS = 100;

  /** A condition that may read files or sockets. */
  @FunctionalInterface
  public interface Condition {
    boolean holds() throws Exception;
  }

  /** A reading that may read files or sockets. */
  @FunctionalInterface
  public interface Probe<T> {
    T read() throws Exception;
  }

  private Await() {}

  /** Returns once {@code condition} holds; fails after {@link #TIMEOUT}. */
  public static void until(String what, Condition condition) throws Exception {
    until(what, TIMEOUT, condition);
  }

  public static void until(String what, Duration timeout, Condition condition) throws Exception {
    until(what, timeout, condition, () -> null);
  }

  /** As above; at the deadline the failure also carries {@code context} (a log's tail, counters). */
  public static void until(
      String what, Duration timeout, Condition condition, Supplier<String> context)
      throws Exception {
    value(what, timeout, condition::holds, Boolean::booleanValue, context);
  }

  /** The first reading of {@code probe} that is {@code done}; fails after {@link #TIMEOUT} with the last one. */
  public static <T> T value(String what, Probe<T> probe, Predicate<? super T> done)
      throws Exception {
    return value(what, TIMEOUT, probe, done);
  }

  public static <T> T value(
      String what, Duration timeout, Probe<T> probe, Predicate<? super T> done) throws Exception {
    return value(what, timeout, probe, done, () -> null);
  }

  /** As above; at the deadline the failure also carries {@code context}. */
  public static <T> T value(
      String what,
      Duration timeout,
      Probe<T> probe,
      Predicate<? super T> done,
      Supplier<String> context)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    long pause = FIRST_PAUSE_MILLIS;
    while (true) {
      T last = probe.read();
      if (done.test(last)) {
        return last;
      }
      if (System.nanoTime() - deadline > 0) {
        String seen = last instanceof Boolean ? "" : "; last seen: " + last;
        String more = context.get();
        throw new AssertionError(
            "timed out after "
                + timeout.toMillis()
                + " ms waiting for "
                + what
                + seen
                + (more == null ? "" : "; " + more));
      }
      TimeUnit.MILLISECONDS.sleep(pause);
      pause = Math.min(LONGEST_PAUSE_MILLIS, pause * 2);
    }
  }
}
