package io.sparkgate.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgate.config.AuditConfig;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.FakeTime;
import io.sparkgate.testing.SmallFilesystem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The audit log on a disk that really fills up (a small tmpfs): nothing that did not reach the file counts as
 * written, the file holds no partial line, writing resumes by itself once there is room, and the gap is in the
 * log where it happened, with its count, time range and cause, for {@code audit verify} to show.
 */
final class AuditDiskFullTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private SmallFilesystem disk;
  private Path file;

  @BeforeEach
  void mount() throws Exception {
    disk = SmallFilesystem.mount(Path.of("target", "tmpfs-" + UUID.randomUUID()), 512);
    file = disk.path().resolve("audit").resolve("audit.jsonl");
  }

  @AfterEach
  void unmount() throws Exception {
    if (disk != null) {
      disk.close();
    }
  }

  private AuditConfig config(boolean required) {
    return new AuditConfig(
        true,
        Optional.of(file),
        1L << 30,
        Duration.ofHours(1),
        100,
        AuditConfig.Fsync.BATCH,
        AuditConfig.DEFAULT_FSYNC_INTERVAL,
        required,
        false);
  }

  private static Supplier<Map<String, Object>> record(int n) {
    return record(n, 200); // a few records are more than the tail of the file's last page
  }

  /** A record with a {@code padding}-character field; past a page, it never fits what a full disk has left. */
  private static Supplier<Map<String, Object>> record(int n, int padding) {
    Map<String, Object> r = AuditLog.newRecord();
    r.put("rpc", "ExecutePlan");
    r.put("n", n);
    r.put("padding", "x".repeat(padding));
    return () -> r;
  }

  @Test
  void fullDisk_nothingCountedAsWritten_noPartialLine_gapRecordedOnRecovery() throws Exception {
    FakeTime time = new FakeTime();
    BlockingQueue<Supplier<Map<String, Object>>> queue = new ArrayBlockingQueue<>(100);
    AuditFiles files = new AuditFiles(file);
    LogFile out = LogFile.append(files, 1L << 30, Duration.ofHours(1), time);
    AuditWriter writer =
        new AuditWriter(
            config(false), queue, time, time, out, HashChain.resume(files), rotated -> {}, () -> 0);
    for (int i = 0; i < 10; i++) {
      queue.add(record(i));
    }
    writer.pass(false);
    assertEquals(10, writer.written());

    disk.fill();
    time.advance(Duration.ofSeconds(5));
    for (int i = 10; i < 30; i++) {
      queue.add(record(i));
    }
    writer.pass(false);
    assertTrue(writer.failing());
    assertEquals(10, writer.written(), "records that did not reach the file count as written");
    assertEquals(20, writer.lost());
    List<String> lines = Files.readAllLines(file);
    assertEquals(10, lines.size(), "the file was cut back to its last whole record");
    AuditVerifier.Result meanwhile = AuditVerifier.verify(List.of(file));
    assertTrue(meanwhile.ok(), meanwhile.message());

    time.advance(Duration.ofSeconds(5));
    writer.pass(false); // still full: the writer's own retry does not get through either
    assertTrue(writer.failing());
    assertEquals(20, writer.lost());
    for (int i = 30; i < 35; i++) {
      queue.add(record(i));
    }
    writer.pass(false); // records that come meanwhile are lost too, and counted
    assertTrue(writer.failing());
    assertEquals(25, writer.lost());
    assertEquals(10, Files.readAllLines(file).size());

    disk.free();
    time.advance(Duration.ofSeconds(5));
    writer.pass(false); // the retry, with no record queued, writes the gap record
    assertFalse(writer.failing());
    for (int i = 40; i < 43; i++) {
      queue.add(record(i));
    }
    writer.pass(false);
    assertEquals(13, writer.written());

    AuditVerifier.Result result = AuditVerifier.verify(List.of(file));
    assertTrue(result.ok(), result.message());
    assertEquals(14, result.records(), "10 records, the gap record, 3 records");
    assertEquals(1, result.gaps().size(), result.message());
    AuditVerifier.Gap gap = result.gaps().get(0);
    assertEquals(11, gap.seq());
    assertEquals(25, gap.recordsLost());
    assertTrue(gap.reason().contains("No space left on device"), gap.reason());
    // The loss began after record 10 (written at t0) and was stated once the disk took writes
    // (t0+15 s).
    assertEquals(time.instant().minusSeconds(15).toString(), gap.since());
    assertEquals(time.instant().toString(), gap.until());
    assertTrue(result.message().contains("25 record(s) lost between"), result.message());
    assertEquals(
        "audit_gap", JSON.readTree(Files.readAllLines(file).get(10)).path("event").asText());
  }

  @Test
  void required_refusesWhileTheDiskIsFull_andAcceptsOnceItRecovers() throws Exception {
    try (AuditLog log = AuditLog.open(config(true), Clock.systemUTC())) {
      assertTrue(log.write(record(0).get()));
      Await.until("the first record written", () -> log.written() == 1);
      assertTrue(log.accepting());

      disk.fill();
      assertTrue(log.write(record(1, 8192).get()), "the queue still takes the record");
      Await.until("the writer to see the full disk", () -> !log.accepting());
      assertEquals(
          Optional.of("writing the audit log failed (see the log)"), log.problem(), "readiness");
      assertEquals(1, log.written(), "the lost record does not count as written");
      assertEquals(1, log.dropped());

      disk.free();
      // No record is queued (a proxy with audit.required refuses calls now): the writer retries by
      // itself.
      Await.until("the writer to write again", log::accepting);
      assertEquals(Optional.empty(), log.problem());
      assertTrue(log.write(record(2).get()));
    }
    AuditVerifier.Result result = AuditVerifier.verify(List.of(file));
    assertTrue(result.ok(), result.message());
    assertEquals(3, result.records(), "record 0, the gap record, record 2");
    assertEquals(1, result.gaps().get(0).recordsLost());
  }

  @Test
  void queueDrops_areStatedInTheLogToo() throws Exception {
    FakeTime time = new FakeTime();
    BlockingQueue<Supplier<Map<String, Object>>> queue = new ArrayBlockingQueue<>(100);
    AuditFiles files = new AuditFiles(file);
    LogFile out = LogFile.append(files, 1L << 30, Duration.ofHours(1), time);
    long[] dropped = {0};
    AuditWriter writer =
        new AuditWriter(
            config(false),
            queue,
            time,
            time,
            out,
            HashChain.resume(files),
            rotated -> {},
            () -> dropped[0]);
    queue.add(record(0));
    writer.pass(false);
    dropped[0] = 7; // a burst the queue could not take
    queue.add(record(1));
    writer.pass(true);
    writer.pass(true);
    assertTrue(writer.finished());
    AuditVerifier.Result result = AuditVerifier.verify(List.of(file));
    assertEquals(3, result.records());
    assertEquals(7, result.gaps().get(0).recordsLost());
    assertTrue(result.gaps().get(0).reason().contains("queue"), result.gaps().toString());
  }
}
