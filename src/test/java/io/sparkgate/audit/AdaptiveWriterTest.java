package io.sparkgate.audit;

import static io.sparkgate.audit.BackgroundPriorityTest.SCHED_BATCH;
import static io.sparkgate.audit.BackgroundPriorityTest.SCHED_IDLE;
import static io.sparkgate.audit.BackgroundPriorityTest.assumeLinuxWith;
import static io.sparkgate.audit.BackgroundPriorityTest.awaitThread;
import static io.sparkgate.audit.BackgroundPriorityTest.config;
import static io.sparkgate.audit.BackgroundPriorityTest.statOfThread;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

class AdaptiveWriterTest {

  @Test
  void theWriterIdlesWhereItMayAndIsABatchThreadElsewhere(@TempDir Path dir) throws Exception {
    assumeLinuxWith("chrt");
    try (AuditLog log = AuditLog.open(config(dir, 1024 * 1024), Clock.systemUTC())) {
      // The log's own probe decides; a second probe here could answer differently on a busy machine.
      int expected = log.idlesWhileKeepingUp() ? SCHED_IDLE : SCHED_BATCH;
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
    AtomicBoolean spin = new AtomicBoolean(true);
    List<Thread> spinners = new ArrayList<>();
    int records = 20_000;
    try (AuditLog log = AuditLog.open(config(dir, 64L * 1024 * 1024), Clock.systemUTC())) {
      assumeTrue(log.idlesWhileKeepingUp(), "this process may not leave SCHED_IDLE (not root, no CAP_SYS_NICE)");
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
        if (i % 50 == 0) {
          // A steady stream rather than one burst, as calls would queue them: at most 10,000 a second, which a
          // batch writer sharing the cores with the spinners keeps up with, and an idle one does not.
          Thread.sleep(5);
        }
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (log.written() < records && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertEquals(0, log.dropped(), "records dropped");
      assertEquals(records, log.written(), "records written while the cores were busy");
      // It may already have idled again by now (a second of keeping up), so the move is counted, not sampled.
      assertTrue(log.writerBoosts() > 0, "a writer behind on busy cores is moved to batch");

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

  /**
   * A burst with nothing after it: {@code queued} sees no later record that could notice the wait, so the
   * booster itself must find the record left waiting and move the writer to batch. The writer here starts idle
   * and then never drains, as a writer starved on busy cores would.
   */
  @Test
  void recordsLeftWaitingAfterTheLastOneMoveTheWriterToBatch() throws Exception {
    // The only record: far below the high-water mark, and no later one. Queued once writerStarted has returned,
    // as the helper does: the thread is SCHED_IDLE a moment before the writer's own flag says so.
    assertAStalledWriterIsMovedToBatch(0, adaptive -> adaptive.queued(1));
  }

  /**
   * Records queued before the writer set its idle flag found a batch writer and started no clock; with no record
   * after them, the booster must still see them waiting (it did not: they could wait behind an idle writer for
   * as long as the cores stayed busy).
   */
  @Test
  void recordsQueuedBeforeTheWriterStartedAreNotLeftWaiting() throws Exception {
    assertAStalledWriterIsMovedToBatch(1, adaptive -> {});
  }

  /**
   * A record queued between the writer's drain and its call to drained() had its clock cleared by that call;
   * with no record after it, the booster must still see it waiting.
   */
  @Test
  void aRecordQueuedWhileTheWriterDrainedIsNotLeftWaiting() throws Exception {
    assertAStalledWriterIsMovedToBatch(0, adaptive -> adaptive.drained(0));
  }

  /**
   * At close the writer is hurried and may finish before the booster's chrt finds it: that failed move is no
   * sign of records left behind, and must not be reported as one (it was, at the end of a benchmark run).
   */
  @Test
  void aWriterThatHasStoppedIsNotReportedAsBehind() throws Exception {
    assumeLinuxWith("chrt");
    AdaptiveWriter adaptive = AdaptiveWriter.probe(10_000, () -> 1);
    assumeTrue(adaptive != null, "this process may not leave SCHED_IDLE (not root, no CAP_SYS_NICE)");
    Logger logger = (Logger) LoggerFactory.getLogger(AdaptiveWriter.class);
    ListAppender<ILoggingEvent> seen = new ListAppender<>();
    seen.start();
    logger.addAppender(seen);
    try {
      Thread writer = new Thread(() -> {
        adaptive.writerStarted();
        adaptive.writerStopped();
      }, "finished-writer");
      writer.start();
      writer.join();
      adaptive.hurry();
      // The booster acts within milliseconds of being woken (one chrt); give it far longer.
      Thread.sleep(500);
      assertEquals(0, adaptive.boosts(), "no thread was moved");
      assertTrue(seen.list.stream().noneMatch(e -> e.getLevel() == Level.WARN),
          () -> "no warning about records left behind: " + seen.list);
    } finally {
      logger.detachAppender(seen);
      adaptive.close();
    }
  }

  /**
   * Starts an idle writer with {@code queuedAtStart} records in its queue, runs {@code then} on it with one
   * record queued, and stalls it, as a writer starved on busy cores would be: the booster alone must move it to
   * batch. Nothing calls {@code queued}.
   */
  private static void assertAStalledWriterIsMovedToBatch(int queuedAtStart, Consumer<AdaptiveWriter> then)
      throws Exception {
    assumeLinuxWith("chrt");
    AtomicInteger backlog = new AtomicInteger(queuedAtStart);
    AdaptiveWriter adaptive = AdaptiveWriter.probe(10_000, backlog::get);
    assumeTrue(adaptive != null, "this process may not leave SCHED_IDLE (not root, no CAP_SYS_NICE)");
    CountDownLatch release = new CountDownLatch(1);
    Thread writer = new Thread(() -> {
      adaptive.writerStarted();
      backlog.set(1);
      then.accept(adaptive);
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "stalled-writer2");
    writer.start();
    try {
      assertEquals(SCHED_BATCH, awaitThread("stalled-writer2", BackgroundPriorityTest::policy, SCHED_BATCH),
          "a record waiting past the limit moves the writer to batch");
    } finally {
      release.countDown();
      writer.join();
      adaptive.close();
    }
  }
}
