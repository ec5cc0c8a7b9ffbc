package io.sparkgate.tls;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The daemon thread on which TLS files are re-read, for the listener and the backends alike. */
final class ReloadThread {
  private static final Logger log = LoggerFactory.getLogger(ReloadThread.class);

  private ReloadThread() {}

  static ScheduledExecutorService start() {
    return Executors.newSingleThreadScheduledExecutor(
        r -> {
          Thread t = new Thread(r, "sparkgate-tls-reload");
          t.setDaemon(true); // never the reason the JVM stays up
          return t;
        });
  }

  /** Runs {@code reload} every {@code interval}; null, zero or negative means never. */
  static void every(ScheduledExecutorService thread, Duration interval, Runnable reload) {
    if (interval == null || interval.isZero() || interval.isNegative()) return;
    long nanos = interval.toNanos();
    thread.scheduleWithFixedDelay(
        () -> {
          // Each reloader catches its own file problems; anything else must not kill the schedule.
          try {
            reload.run();
          } catch (RuntimeException e) {
            log.warn("TLS reload failed unexpectedly; keeping the current material", e);
          }
        },
        nanos,
        nanos,
        TimeUnit.NANOSECONDS);
  }
}
