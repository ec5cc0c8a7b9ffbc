package io.sparkgate.audit;

import static io.sparkgate.audit.BackgroundPriorityTest.SCHED_BATCH;
import static io.sparkgate.audit.BackgroundPriorityTest.SCHED_IDLE;
import static io.sparkgate.audit.BackgroundPriorityTest.assumeLinuxWith;
import static io.sparkgate.audit.BackgroundPriorityTest.awaitThread;
import static io.sparkgate.audit.BackgroundPriorityTest.config;
import static io.sparkgate.audit.BackgroundPriorityTest.statOfThread;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AdaptiveWriterTest {

  /** Whether this process may move a thread back from SCHED_IDLE (root, CAP_SYS_NICE or LimitNICE=+0). */
  private static boolean mayLeaveIdle() {
    AdaptiveWriter probe = AdaptiveWriter.probe(10_000);
    if (probe == null) {
      return false;
    }
    probe.close();
    return true;
  }

  @Test
  void theWriterIdlesWhereItMayAndIsABatchThreadElsewhere(@TempDir Path dir) throws Exception {
    assumeLinuxWith("chrt");
    int expected = mayLeaveIdle() ? SCHED_IDLE : SCHED_BATCH;
    try (AuditLog log = AuditLog.open(config(dir, 1024 * 1024), Clock.systemUTC())) {
      assertEquals(expected, awaitThread("sparkgate-audit", BackgroundPriorityTest::policy, expected),
          "the audit writer's scheduling policy at rest");
      assertEquals(0, statOfThread("sparkgate-audit", BackgroundPriorityTest::nice), "and its nice value");
    }
  }

  /**
   * With every core kept busy an idle-policy writer gets almost no CPU: the records it falls behind on must
   * move it back to batch, so that none is dropped, and once the cores are free and it has kept up for a
   * second it idles again.
   */
  @Test
  void aWriterThatFallsBehindIsMovedBackToBatchAndLosesNothing(@TempDir Path dir) throws Exception {
    assumeLinuxWith("chrt");
    assumeTrue(mayLeaveIdle(), "this process may not leave SCHED_IDLE (not root, no CAP_SYS_NICE)");
    AtomicBoolean spin = new AtomicBoolean(true);
    List<Thread> spinners = new ArrayList<>();
    int records = 20_000;
    try (AuditLog log = AuditLog.open(config(dir, 64L * 1024 * 1024), Clock.systemUTC())) {
      assertEquals(SCHED_IDLE, awaitThread("sparkgate-audit", BackgroundPriorityTest::policy, SCHED_IDLE));
      for (int i = 0; i < Runtime.getRuntime().availableProcessors() + 1; i++) {
        Thread t = new Thread(() -> {
          long x = 0;
          while (spin.get()) {
            x += System.nanoTime() & 1;
          }
          if (x == 42) {
            System.out.print("");
          }
        }, "busy-" + i);
        t.start();
        spinners.add(t);
      }
      for (int i = 0; i < records; i++) {
        Map<String, Object> r = AuditLog.newRecord();
        r.put("n", i);
        r.put("pad", "x".repeat(200));
        if (!log.write(r)) {
          break;
        }
        if (i % 500 == 0) {
          Thread.sleep(5); // a steady stream rather than one burst, as calls would queue them
        }
      }
      assertEquals(SCHED_BATCH, awaitThread("sparkgate-audit", BackgroundPriorityTest::policy, SCHED_BATCH),
          "a writer behind on busy cores runs as a batch thread");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (log.written() < records && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertEquals(0, log.dropped(), "records dropped");
      assertEquals(records, log.written(), "records written while the cores were busy");

      spin.set(false);
      for (Thread t : spinners) {
        t.join();
      }
      assertEquals(SCHED_IDLE, awaitThread("sparkgate-audit", BackgroundPriorityTest::policy, SCHED_IDLE),
          "a writer that keeps up idles again");
    } finally {
      spin.set(false);
    }
  }
}
