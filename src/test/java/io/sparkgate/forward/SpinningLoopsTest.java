package io.sparkgate.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.Sparkgate;
import io.sparkgate.bench.BenchBackend;
import io.sparkgate.bench.LoadGenerator;
import io.sparkgate.config.AuditConfig;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.config.BackendConfig;
import io.sparkgate.config.ListenConfig;
import io.sparkgate.config.ProxyConfig;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A proxy whose event loops spin before they sleep ({@code listen.event_loop_spin}) forwards as one that does not. */
class SpinningLoopsTest {
  @Test
  void smallCallsAndStreams_forwardedBySpinningLoops() throws Exception {
    try (BenchBackend backend = BenchBackend.start(0)) {
      ListenConfig listen = new ListenConfig("127.0.0.1", 0, true, 64L * 1024 * 1024, 1000, Duration.ofSeconds(5),
          Duration.ofMinutes(1), Duration.ofSeconds(1), 2, Duration.ofNanos(200_000));
      Sparkgate proxy = Sparkgate.start(new ProxyConfig(Path.of("spin.yaml"), listen, Optional.empty(),
          new BackendConfig("127.0.0.1", backend.port(), Optional.empty()), AuthConfig.disabled(),
          AuditConfig.disabled()));
      try {
        LoadGenerator.Target target = new LoadGenerator.Target("sparkgate", "127.0.0.1", proxy.port(), null, "t");
        LoadGenerator.ClosedLoop calls =
            LoadGenerator.closedLoop(target, 2, Duration.ofMillis(100), Duration.ofMillis(400));
        assertEquals(0, calls.errors(), calls.toString());
        assertTrue(calls.latency().count() > 0, calls.toString());
        LoadGenerator.Streaming streams =
            LoadGenerator.streaming(target, 4, 256 * 1024, 16, Duration.ofMillis(100), Duration.ofMillis(400));
        assertEquals(0, streams.errors(), streams.toString());
        assertTrue(streams.bytes() > 256 * 1024, streams.toString());

        // With nothing to do the loops must go back to sleep: a spin that never ended would burn its core.
        // (after the load generator's channels have had time to close: their shutdown is work for the loops)
        Thread.sleep(500);
        long before = ioThreadsCpuNanos();
        Thread.sleep(300);
        long idle = ioThreadsCpuNanos() - before;
        assertTrue(idle < 50_000_000L, "event loops used " + idle / 1_000_000 + " ms of CPU in 300 ms idle");
      } finally {
        proxy.close();
      }
    }
  }

  private static long ioThreadsCpuNanos() {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long total = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("sparkgate-io")) {
        total += Math.max(0, threads.getThreadCpuTime(t.getId()));
      }
    }
    return total;
  }
}
