package io.sparkgate.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.Sparkgate;
import io.sparkgate.config.ListenConfig;
import io.sparkgate.testing.TestConfigs;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Keeps the benchmark harness working: the fake backend and the load generator against a real proxy on a
 * real port, checking counts, and the figures the harness computes from its clock on a fake one (never how
 * fast anything was: a timed unit test on a shared machine proves nothing). The full comparison is
 * bench/run.sh.
 */
final class BenchSmokeTest {
  private BenchBackend backend;
  private Sparkgate proxy;
  private LoadGenerator.Target target;

  @BeforeEach
  void start() throws Exception {
    backend = BenchBackend.start(0);
    ListenConfig listen = TestConfigs.listen(true, 64L * 1024 * 1024, Duration.ofSeconds(5));
    proxy =
        Sparkgate.start(TestConfigs.proxy(listen, Optional.empty(), "127.0.0.1", backend.port()));
    target = new LoadGenerator.Target("sparkgate", "127.0.0.1", proxy.port(), null, "smoke-token");
  }

  @AfterEach
  void stop() throws Exception {
    proxy.close();
    backend.close();
  }

  /**
   * A clock that moves only when the generator waits on it (to the time waited for), and by {@code tick} on
   * every reading: what the generator computes from it is exact.
   */
  private static final class FakeClock implements LoadGenerator.Clock {
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final long tick;

    FakeClock(Duration tick) {
      this.tick = tick.toNanos();
    }

    @Override
    public long nanoTime() {
      return now.getAndAdd(tick);
    }

    @Override
    public void sleepUntil(long nanos) {
      now.accumulateAndGet(nanos, Math::max);
    }

    @Override
    public void after(ScheduledExecutorService timer, long delayNanos, Runnable action) {
      now.addAndGet(Math.max(0, delayNanos));
      timer.execute(action);
    }
  }

  @Test
  void closedLoop_measuresEveryCall() throws Exception {
    // No warm-up: the first call is measured, however long it takes.
    LoadGenerator.ClosedLoop r =
        LoadGenerator.closedLoop(target, 1, Duration.ZERO, Duration.ofSeconds(1));
    assertEquals(0, r.errors());
    assertTrue(r.latency().count() > 0, "calls measured: " + r);
  }

  @Test
  void caller_timesOneCallOverOneConnection() throws Exception {
    try (LoadGenerator.Caller caller =
        new LoadGenerator.Caller(target, new FakeClock(Duration.ofMillis(3)))) {
      for (int i = 0; i < 20; i++) {
        assertEquals(Duration.ofMillis(3).toNanos(), caller.once(), "a reading before, one after");
      }
    }
    backend.close(); // a call that fails says so instead of throwing
    try (LoadGenerator.Caller caller = new LoadGenerator.Caller(target, LoadGenerator.SYSTEM)) {
      assertEquals(-1, caller.once());
    }
  }

  @Test
  void openLoop_recordsEveryCallIntendedInTheWindow() throws Exception {
    LoadGenerator.OpenLoop r =
        LoadGenerator.openLoop(target, 100, Duration.ofMillis(100), Duration.ofMillis(500));
    assertEquals(0, r.errors());
    // 100 a second for 500 ms: the schedule, not the machine, says how many; each in both
    // histograms.
    assertEquals(50, r.latency().count(), r.toString());
    assertEquals(50, r.corrected().count(), r.toString());
  }

  @Test
  void openWindows_oneAfterAnotherOnOneConnection_eachRecordsItsOwnCalls() throws Exception {
    io.grpc.ManagedChannel ch = LoadGenerator.channel(target);
    try {
      byte[] request = BenchProtocol.executePlanRequest("windows", 16, 1);
      FakeClock clock = new FakeClock(Duration.ZERO);
      for (int window = 0; window < 2; window++) {
        org.HdrHistogram.Histogram raw = LoadGenerator.newHistogram();
        org.HdrHistogram.Histogram corrected = LoadGenerator.newHistogram();
        // 200 a second: 20 calls in the 100 ms lead-in, not recorded, then 60 in the 300 ms
        // measured, each started when intended (the fake clock waits exactly).
        LoadGenerator.OpenWindow w =
            LoadGenerator.openWindow(
                ch,
                request,
                200,
                Duration.ofMillis(100),
                Duration.ofMillis(300),
                raw,
                corrected,
                clock);
        assertEquals(0, w.errors(), w.toString());
        assertEquals(60, w.completed(), w.toString());
        assertEquals(60, raw.getTotalCount());
        assertEquals(60, corrected.getTotalCount());
        assertEquals(0, w.late(), w.toString());
        assertEquals(0.3, w.seconds(), 1e-9, w.toString());
      }
    } finally {
      ch.shutdownNow();
    }
  }

  @Test
  void streaming_movesBytes() throws Exception {
    LoadGenerator.Streaming r =
        LoadGenerator.streaming(target, 2, 64 * 1024, 32, Duration.ZERO, Duration.ofSeconds(1));
    assertEquals(0, r.errors());
    assertTrue(r.calls() >= 2, "each stream ends at least the call it started: " + r);
    assertTrue(r.bytes() > 0, r.toString());
  }

  @Test
  void slowReader_isPaced() throws Exception {
    long rate = 4 * 1024 * 1024;
    LoadGenerator.SlowRead r =
        LoadGenerator.slowRead(target, 1024 * 1024, rate, 64 * 1024, new FakeClock(Duration.ZERO));
    assertEquals("OK", r.status());
    assertTrue(r.bytes() >= 1024 * 1024, r.toString()); // batches plus their protobuf framing
    // It asked for each next message only when its budget allowed: on its clock, it took exactly as
    // long as reading that much at that rate.
    assertEquals((double) r.bytes() / rate, r.seconds(), 1e-6, r.toString());
  }

  @Test
  void idleSessions_open() throws Exception {
    try (LoadGenerator.IdleSessions s = LoadGenerator.idleSessions(target, 20)) {
      assertEquals(20, s.size());
    }
  }
}
