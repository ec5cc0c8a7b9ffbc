package io.sparkgate.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.Sparkgate;
import io.sparkgate.config.ListenConfig;
import io.sparkgate.testing.TestConfigs;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Keeps the benchmark harness working: the fake backend and the load generator against a real proxy on a
 * real port, for about two seconds, checking only that the figures are sane (never how fast: a timed unit
 * test on a shared machine proves nothing). The full comparison is bench/run.sh.
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

  @Test
  void closedLoop_reportsLatencies() throws Exception {
    LoadGenerator.ClosedLoop r =
        LoadGenerator.closedLoop(target, 1, Duration.ofMillis(200), Duration.ofMillis(500));
    assertEquals(0, r.errors());
    assertTrue(r.latency().count() > 0, "calls measured: " + r);
    assertTrue(
        r.latency().p50() > 0
            && r.latency().p50() <= r.latency().p99()
            && r.latency().p99() <= r.latency().max(),
        r.toString());
  }

  @Test
  void caller_callsOverOneConnection() throws Exception {
    try (LoadGenerator.Caller caller = new LoadGenerator.Caller(target)) {
      for (int i = 0; i < 20; i++) {
        long nanos = caller.once();
        assertTrue(nanos > 0 && nanos < Duration.ofSeconds(30).toNanos(), "latency " + nanos);
      }
    }
    backend.close(); // a call that fails says so instead of throwing
    try (LoadGenerator.Caller caller = new LoadGenerator.Caller(target)) {
      assertEquals(-1, caller.once());
    }
  }

  @Test
  void openLoop_achievesAboutTheRate() throws Exception {
    LoadGenerator.OpenLoop r =
        LoadGenerator.openLoop(target, 100, Duration.ofMillis(100), Duration.ofMillis(500));
    assertEquals(0, r.errors());
    // Every call intended inside the window (100 a second for 500 ms) completes; the rate itself
    // depends on how busy the machine is.
    assertEquals(50, Math.round(r.achievedRate() * r.seconds()), r.toString());
    assertTrue(r.corrected().p50() >= r.latency().p50() * 0.99, r.toString());
  }

  @Test
  void openWindows_oneAfterAnotherOnOneConnection_eachRecordsItsOwnCalls() throws Exception {
    io.grpc.ManagedChannel ch = LoadGenerator.channel(target);
    try {
      byte[] request = BenchProtocol.executePlanRequest("windows", 16, 1);
      for (int window = 0; window < 2; window++) {
        org.HdrHistogram.Histogram raw = LoadGenerator.newHistogram();
        org.HdrHistogram.Histogram corrected = LoadGenerator.newHistogram();
        // 200 a second: 20 calls in the 100 ms lead-in, not recorded, then 60 in the 300 ms
        // measured.
        LoadGenerator.OpenWindow w =
            LoadGenerator.openWindow(
                ch, request, 200, Duration.ofMillis(100), Duration.ofMillis(300), raw, corrected);
        assertEquals(0, w.errors(), w.toString());
        assertEquals(60, w.completed(), w.toString());
        assertEquals(60, raw.getTotalCount());
        assertEquals(60, corrected.getTotalCount());
        assertTrue(w.seconds() >= 0.3, w.toString());
      }
    } finally {
      ch.shutdownNow();
    }
  }

  @Test
  void streaming_movesBytes() throws Exception {
    LoadGenerator.Streaming r =
        LoadGenerator.streaming(
            target, 2, 64 * 1024, 32, Duration.ofMillis(100), Duration.ofMillis(500));
    assertEquals(0, r.errors());
    assertTrue(r.bytes() > 64 * 1024 && r.mbPerSecond() > 0, r.toString());
  }

  @Test
  void slowReader_isPaced() throws Exception {
    LoadGenerator.SlowRead r =
        LoadGenerator.slowRead(target, 1024 * 1024, 4 * 1024 * 1024, 64 * 1024);
    assertEquals("OK", r.status());
    assertTrue(r.bytes() >= 1024 * 1024, r.toString()); // batches plus their protobuf framing
    assertTrue(r.seconds() >= 0.2, r.toString());
  }

  @Test
  void idleSessions_open() throws Exception {
    try (LoadGenerator.IdleSessions s = LoadGenerator.idleSessions(target, 20)) {
      assertEquals(20, s.size());
    }
  }
}
