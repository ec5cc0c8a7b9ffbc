package io.sparkgate.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.config.AuditConfig;
import io.sparkgate.testing.FakeTime;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The writer's passes on the test thread, on a fake clock: nothing here waits, and time moves only where a test
 * moves it, so linger, group commit and rotation are checked exactly.
 */
final class AuditWriterTest {
  private static final int QUEUE = 5000;

  @TempDir Path dir;
  private final FakeTime time = new FakeTime();
  private final BlockingQueue<Supplier<Map<String, Object>>> queue =
      new ArrayBlockingQueue<>(QUEUE);
  private final List<Path> rotated = new ArrayList<>();

  private AuditConfig config(AuditConfig.Fsync fsync, Duration fsyncInterval, long maxFileSize) {
    return new AuditConfig(
        true,
        Optional.of(dir.resolve("audit.jsonl")),
        maxFileSize,
        Duration.ofHours(1),
        QUEUE,
        fsync,
        fsyncInterval,
        false,
        false);
  }

  private AuditWriter writer(AuditConfig config) throws IOException {
    AuditFiles files = new AuditFiles(dir.resolve("audit.jsonl"));
    LogFile out = LogFile.append(files, config.maxFileSize(), config.rotateInterval(), time);
    return new AuditWriter(
        config, queue, time, time, out, HashChain.resume(files), rotated::add, () -> 0);
  }

  /** A writer with fsync: never, rotating at {@code maxFileSize}. */
  private AuditWriter unforced(long maxFileSize) throws IOException {
    return writer(config(AuditConfig.Fsync.NEVER, AuditConfig.DEFAULT_FSYNC_INTERVAL, maxFileSize));
  }

  private void queue(int records) {
    for (int i = 0; i < records; i++) {
      Map<String, Object> r = AuditLog.newRecord();
      r.put("rpc", "ExecutePlan");
      r.put("n", i);
      assertTrue(queue.offer(() -> r));
    }
  }

  private List<Path> allFiles() {
    List<Path> files = new ArrayList<>(rotated);
    files.add(dir.resolve("audit.jsonl"));
    return files;
  }

  /** The log's files, rotated and current, verify as one chain of {@code records} records. */
  private void assertChain(long records) throws IOException {
    AuditVerifier.Result result = AuditVerifier.verify(allFiles());
    assertTrue(result.ok(), result.message());
    assertEquals(records, result.records());
  }

  @Test
  void fsyncBatch_forcesOncePerInterval_notPerRecord() throws IOException {
    AuditWriter writer = writer(config(AuditConfig.Fsync.BATCH, Duration.ofMillis(100), 1L << 30));
    queue(50);
    writer.pass(false);
    assertEquals(50, writer.written());
    assertEquals(0, writer.syncs(), "written, but the interval has not passed: no fsync yet");

    time.advance(Duration.ofMillis(60));
    queue(50);
    writer.pass(false);
    AuditWriter.Wait idle = writer.pass(false);
    assertEquals(0, writer.syncs(), "60 ms of 100: still none");
    assertEquals(
        time.read() + 40_000_000L,
        idle.until(),
        "the idle writer looks again when the fsync is due");

    time.advance(Duration.ofMillis(40));
    writer.pass(false);
    assertEquals(1, writer.syncs(), "one fsync for the 100 records of the interval");
    writer.pass(false);
    assertEquals(1, writer.syncs(), "nothing written since: no second fsync");

    queue(10);
    writer.pass(false);
    time.advance(Duration.ofMillis(99));
    writer.pass(false);
    assertEquals(1, writer.syncs(), "at most one per interval");
    time.advance(Duration.ofMillis(1));
    writer.pass(false);
    assertEquals(2, writer.syncs());
  }

  @Test
  void fsyncAlwaysForcesEveryRecord_neverForcesNone() throws IOException {
    AuditWriter always =
        writer(config(AuditConfig.Fsync.ALWAYS, AuditConfig.DEFAULT_FSYNC_INTERVAL, 1L << 30));
    queue(7);
    always.pass(false);
    assertEquals(7, always.syncs());
    always.pass(true);

    AuditWriter never = unforced(1L << 30);
    queue(7);
    never.pass(false);
    time.advance(Duration.ofHours(1));
    never.pass(false);
    assertEquals(0, never.syncs());
  }

  @Test
  void linger_growsWhileBatchesAreSmall_andShrinksOnceTheyAreFull() {
    long linger = AuditWriter.LINGER_NANOS;
    List<Long> seen = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      linger = AuditWriter.nextLinger(linger, 3);
      seen.add(linger / 1_000_000);
    }
    assertEquals(List.of(10L, 20L, 40L, 50L, 50L, 50L), seen, "ms; doubles up to the 50 ms cap");
    linger = AuditWriter.nextLinger(linger, AuditWriter.FULL_BATCH);
    assertEquals(25, linger / 1_000_000);
    for (int i = 0; i < 5; i++) {
      linger = AuditWriter.nextLinger(linger, 5_000);
    }
    assertEquals(AuditWriter.LINGER_NANOS, linger, "full batches bring it back to 5 ms, no lower");
  }

  @Test
  void afterABatch_theWriterLingers_andOnlyABacklogEndsItEarly() throws IOException {
    AuditWriter writer = unforced(1L << 30);
    AuditWriter.Wait idle = writer.pass(false);
    assertEquals(1, idle.records(), "waiting for records: the first one wakes it");
    assertEquals(time.read() + AuditWriter.MAX_IDLE_NANOS, idle.until(), "nothing else is due");

    queue(3);
    AuditWriter.Wait linger = writer.pass(false);
    assertEquals(
        time.read() + 10_000_000L, linger.until(), "a small batch: the 5 ms linger doubled");
    assertEquals(QUEUE / 2, linger.records(), "half a queue of records ends the linger early");
    assertFalse(linger.over(time.read() + 9_999_999L, QUEUE / 2 - 1));
    assertTrue(linger.over(time.read(), QUEUE / 2));
    assertTrue(linger.over(time.read() + 10_000_000L, 0));
  }

  /**
   * 300 records at one per 3 ms, the writer passing whenever the thread would (a record for an idle writer,
   * the end of a linger otherwise): a fixed 5 ms linger took a batch (a wake-up and a write) per one or two of
   * them, over 150; the growing linger gathers tens.
   */
  @Test
  void aModerateRate_isWrittenInFewBatches() throws IOException {
    AuditWriter writer = writer(config(AuditConfig.Fsync.BATCH, Duration.ofMillis(100), 1L << 30));
    AuditWriter.Wait wait = writer.pass(false);
    int passes = 1;
    for (int i = 0; i < 300; i++) {
      queue(1);
      while (wait.over(time.read(), queue.size())) {
        wait = writer.pass(false);
        passes++;
      }
      time.advance(Duration.ofMillis(3));
    }
    assertTrue(passes <= 25, "passes: " + passes);
    // At most one per 100 ms interval of the 900; at least one per interval and a longest linger
    // (150 ms).
    assertTrue(writer.syncs() >= 5 && writer.syncs() <= 9, "fsyncs: " + writer.syncs());
    writer.pass(true);
    assertTrue(writer.finished());
    assertEquals(300, Files.readAllLines(dir.resolve("audit.jsonl")).size());
    assertChain(300);
  }

  @Test
  void rotation_byTime() throws IOException {
    AuditWriter writer = unforced(1L << 30);
    queue(1);
    writer.pass(false);
    time.advance(Duration.ofMinutes(59));
    writer.pass(false);
    assertEquals(List.of(), rotated, "59 minutes of an hour");
    time.advance(Duration.ofMinutes(1));
    writer.pass(false);
    assertEquals(1, rotated.size(), "an hour old: rotated");
    time.advance(Duration.ofHours(2));
    writer.pass(false);
    assertEquals(1, rotated.size(), "an empty file is never rotated");
    queue(1);
    writer.pass(true);
    assertChain(2);
  }

  @Test
  void anIdleWriter_looksAgainWhenTheRotationByAgeIsDue() throws IOException {
    AuditConfig config =
        new AuditConfig(
            true,
            Optional.of(dir.resolve("audit.jsonl")),
            1L << 30,
            Duration.ofSeconds(30),
            QUEUE,
            AuditConfig.Fsync.NEVER,
            AuditConfig.DEFAULT_FSYNC_INTERVAL,
            false,
            false);
    AuditWriter writer = writer(config);
    queue(1);
    writer.pass(false);
    time.advance(Duration.ofSeconds(10));
    AuditWriter.Wait idle = writer.pass(false);
    assertEquals(
        time.read() + Duration.ofSeconds(20).toNanos(), idle.until(), "the file is 10 s of 30 old");
    time.advance(Duration.ofSeconds(20));
    writer.pass(false);
    assertEquals(1, rotated.size());
  }

  @Test
  void rotation_bySize_withinABatch() throws IOException {
    AuditWriter writer = unforced(4096);
    queue(200);
    writer.pass(true);
    assertTrue(rotated.size() >= 3, rotated.toString());
    for (Path p : rotated) {
      long size = Files.size(p);
      assertTrue(
          size >= 4096 && size < 4096 + 200,
          p + ": " + size + " bytes, rotated at the first line past 4 KiB");
    }
    assertChain(200);
  }

  @Test
  void aRecordThatCannotBeBuilt_costsOnlyItself() throws IOException {
    AuditWriter writer = unforced(1L << 30);
    queue(2);
    queue.add(
        () -> {
          throw new IllegalStateException("a bug in a record's builder");
        });
    queue(2);
    writer.pass(true);
    assertEquals(4, writer.written());
    assertEquals(1, writer.lost());
    assertChain(5); // and the gap record stating the lost one, written as the log closed
    AuditVerifier.Result result = AuditVerifier.verify(allFiles());
    assertEquals(1, result.gaps().size());
    assertEquals(5, result.gaps().get(0).seq());
    assertEquals("an audit record could not be built", result.gaps().get(0).reason());
  }

  @Test
  void closing_writesWhatIsQueuedFirst_thenFinishes() throws IOException {
    AuditWriter writer = unforced(1L << 30);
    queue(AuditWriter.BATCH + 1);
    writer.pass(true);
    assertFalse(writer.finished(), "a batch is at most 4096 records: one more is still queued");
    writer.pass(true);
    assertTrue(writer.finished());
    assertEquals(AuditWriter.BATCH + 1, Files.readAllLines(dir.resolve("audit.jsonl")).size());
  }
}
