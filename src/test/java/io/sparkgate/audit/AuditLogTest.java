package io.sparkgate.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.config.AuditConfig;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.FakeTime;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

final class AuditLogTest {
  @TempDir Path dir;

  private AuditConfig config(long maxFileSize, int queueSize) {
    return new AuditConfig(
        true,
        Optional.of(dir.resolve("audit.jsonl")),
        maxFileSize,
        Duration.ofDays(1),
        queueSize,
        AuditConfig.Fsync.BATCH,
        AuditConfig.DEFAULT_FSYNC_INTERVAL,
        false,
        false);
  }

  private static Map<String, Object> record(int i) {
    Map<String, Object> r = AuditLog.newRecord();
    r.put("rpc", "ExecutePlan");
    r.put("principal", "alice");
    r.put("n", i);
    return r;
  }

  private List<Path> allFiles() throws IOException {
    List<Path> files = new ArrayList<>(new AuditFiles(dir.resolve("audit.jsonl")).rotated());
    if (Files.exists(dir.resolve("audit.jsonl"))) {
      files.add(dir.resolve("audit.jsonl"));
    }
    return files;
  }

  private AuditConfig batchEvery(Duration interval) {
    return new AuditConfig(
        true,
        Optional.of(dir.resolve("audit.jsonl")),
        1L << 30,
        Duration.ofDays(1),
        1000,
        AuditConfig.Fsync.BATCH,
        interval,
        false,
        false);
  }

  /**
   * The writer thread waits on the injected ticker: with the fake one still, written records are never forced,
   * and moving it by the interval (and waking the writer to look) forces them, once.
   */
  @Test
  void theWriterThreadWaitsOnTheInjectedTicker() throws Exception {
    FakeTime time = new FakeTime();
    try (AuditLog log = AuditLog.open(batchEvery(Duration.ofHours(1)), time, time)) {
      for (int i = 0; i < 50; i++) {
        log.write(record(i));
      }
      settle(log, time); // a few lingers of at most 50 ms
      assertEquals(50, log.written());
      assertEquals(0, log.syncs(), "written, but the hour has not passed: no fsync yet");
      time.advance(Duration.ofHours(1));
      log.wake();
      waitFor(() -> log.syncs() == 1);
      settle(log, time);
      assertEquals(1, log.syncs(), "one fsync for the 50 records");
    }
  }

  /**
   * With the fake ticker still, neither a linger nor an idle wait ever ends by itself: only what wakes the
   * writer thread gets records written. A waiting writer is woken by the first record; a lingering one by half a
   * queue of them.
   */
  @Test
  void aRecordWakesAWaitingWriter_aBacklogWakesALingeringOne() throws Exception {
    FakeTime time = new FakeTime();
    try (AuditLog log = AuditLog.open(batchEvery(Duration.ofMillis(100)), time, time)) {
      waitFor(() -> log.wakesAt() == 1);
      log.write(record(0));
      waitFor(() -> log.written() == 1);
      waitFor(() -> log.wakesAt() == 500); // lingering after its batch
      for (int i = 1; i < 500; i++) {
        log.write(record(i));
      }
      assertEquals(1, log.written(), "499 records do not end a linger that the ticker never ends");
      log.write(record(500));
      waitFor(() -> log.written() == 501);
    }
  }

  @Test
  void write_close_everyRecordOnDisk_chainVerifies() throws IOException {
    try (AuditLog log = AuditLog.open(config(1L << 30, 100_000), Clock.systemUTC())) {
      for (int i = 0; i < 5000; i++) {
        assertTrue(log.write(record(i)));
      }
    }
    List<String> lines = Files.readAllLines(dir.resolve("audit.jsonl"));
    assertEquals(5000, lines.size());
    assertTrue(
        lines.get(0).startsWith("{\"seq\":1,\"prev\":\"" + HashChain.GENESIS + "\""), lines.get(0));
    AuditVerifier.Result result = AuditVerifier.verify(allFiles());
    assertTrue(result.ok(), result.message());
    assertEquals(5000, result.records());
  }

  @Test
  void rotation_bySize_gzipped_chainContinuesAcrossFiles_andAcrossRestart() throws IOException {
    try (AuditLog log = AuditLog.open(config(8 * 1024, 100_000), Clock.systemUTC())) {
      for (int i = 0; i < 2000; i++) {
        log.write(record(i));
      }
    }
    try (AuditLog log = AuditLog.open(config(8 * 1024, 100_000), Clock.systemUTC())) {
      for (int i = 0; i < 100; i++) {
        log.write(record(i));
      }
    }
    List<Path> files = allFiles();
    assertTrue(files.size() > 3, "expected rotated files, got " + files);
    // Compressed off the writer's thread; close waits for it.
    assertTrue(
        files.subList(0, files.size() - 1).stream()
            .allMatch(f -> f.toString().endsWith(".jsonl.gz")),
        files.toString());
    AuditVerifier.Result result = AuditVerifier.verify(files);
    assertTrue(result.ok(), result.message());
    assertEquals(2100, result.records());
  }

  /**
   * A stop or crash between a rotation and its compression leaves the rotated file uncompressed (or, just
   * before its delete, in both forms): verify reads it as it is, and the next start finishes the job.
   */
  @Test
  void interruptedCompression_finishedAtNextStart_nothingLost() throws IOException {
    try (AuditLog log = AuditLog.open(config(8 * 1024, 100_000), Clock.systemUTC())) {
      for (int i = 0; i < 1000; i++) {
        log.write(record(i));
      }
    }
    List<Path> rotated = new AuditFiles(dir.resolve("audit.jsonl")).rotated();
    assertTrue(rotated.size() >= 3, rotated.toString());
    Path uncompressed = gunzip(rotated.get(0), true); // never compressed
    Path both = gunzip(rotated.get(1), false); // compressed, but the plain file was not deleted yet
    List<Path> files = allFiles();
    assertTrue(files.contains(uncompressed) && !files.contains(both), files.toString());
    AuditVerifier.Result before = AuditVerifier.verify(files);
    assertTrue(before.ok(), before.message());
    assertEquals(1000, before.records());
    // As a shell glob would give them: both forms of one file; verify reads the compressed one.
    List<Path> globbed = new ArrayList<>(files);
    globbed.add(both);
    AuditVerifier.Result withBoth = AuditVerifier.verify(globbed);
    assertTrue(withBoth.ok(), withBoth.message());
    assertEquals(1000, withBoth.records());

    try (AuditLog log = AuditLog.open(config(8 * 1024, 100_000), Clock.systemUTC())) {
      log.write(record(1000));
    }
    try (var listing = Files.list(dir)) {
      List<String> names = listing.map(p -> p.getFileName().toString()).sorted().toList();
      assertTrue(
          names.stream()
              .filter(n -> !n.equals("audit.jsonl"))
              .allMatch(n -> n.endsWith(".jsonl.gz")),
          names.toString());
    }
    AuditVerifier.Result after = AuditVerifier.verify(allFiles());
    assertTrue(after.ok(), after.message());
    assertEquals(1001, after.records());
  }

  /** Writes the plain form of a rotated .gz file beside it; removes the .gz if asked. */
  private static Path gunzip(Path gz, boolean removeGz) throws IOException {
    String name = gz.getFileName().toString();
    Path plain = gz.resolveSibling(name.substring(0, name.length() - ".gz".length()));
    try (var in = new java.util.zip.GZIPInputStream(Files.newInputStream(gz))) {
      Files.write(plain, in.readAllBytes());
    }
    if (removeGz) {
      Files.delete(gz);
    }
    return plain;
  }

  @Test
  void rotation_byTime_withFakeClock() throws IOException {
    FakeTime time = new FakeTime();
    AuditConfig cfg =
        new AuditConfig(
            true,
            Optional.of(dir.resolve("audit.jsonl")),
            1L << 30,
            Duration.ofHours(1),
            1000,
            AuditConfig.Fsync.NEVER,
            AuditConfig.DEFAULT_FSYNC_INTERVAL,
            false,
            false);
    try (AuditLog log = AuditLog.open(cfg, time, time)) {
      log.write(record(1));
      waitFor(() -> log.written() == 1);
      time.advance(Duration.ofHours(2));
      log.wake();
      waitFor(() -> rotatedCount() == 1);
      log.write(record(2));
    }
    assertEquals(1, rotatedCount());
    assertTrue(AuditVerifier.verify(allFiles()).ok());
  }

  @Test
  void fullQueue_countedAsDropped_notBlocking() throws IOException {
    try (AuditLog log = AuditLog.open(config(1L << 30, 1), Clock.systemUTC())) {
      int accepted = 0;
      for (int i = 0; i < 100_000; i++) {
        if (log.write(record(i))) {
          accepted++;
        }
      }
      assertTrue(log.dropped() > 0, "a queue of 1 never filled");
      assertEquals(100_000, accepted + log.dropped());
    }
  }

  @Test
  void verify_pinpointsEditedDeletedAndReorderedLines() throws IOException {
    try (AuditLog log = AuditLog.open(config(1L << 30, 1000), Clock.systemUTC())) {
      for (int i = 0; i < 10; i++) {
        log.write(record(i));
      }
    }
    Path file = dir.resolve("audit.jsonl");
    List<String> original = Files.readAllLines(file);

    List<String> edited = new ArrayList<>(original);
    edited.set(4, edited.get(4).replace("alice", "mallory"));
    assertBroken(file, edited, "audit.jsonl:6", "record 5 (the line before) was edited");

    List<String> deleted = new ArrayList<>(original);
    deleted.remove(6);
    assertBroken(file, deleted, "audit.jsonl:7", "1 record(s) missing");

    List<String> reordered = new ArrayList<>(original);
    reordered.set(2, original.get(3));
    reordered.set(3, original.get(2));
    assertBroken(file, reordered, "audit.jsonl:3", "record 4 follows record 2");

    Files.write(file, original);
    assertTrue(AuditVerifier.verify(List.of(file)).ok());
  }

  private static void assertBroken(Path file, List<String> lines, String where, String what)
      throws IOException {
    Files.write(file, lines, StandardCharsets.UTF_8);
    AuditVerifier.Result result = AuditVerifier.verify(List.of(file));
    assertFalse(result.ok());
    assertTrue(
        result.message().contains(where) && result.message().contains(what), result.message());
  }

  private int rotatedCount() {
    try {
      return new AuditFiles(dir.resolve("audit.jsonl")).rotated().size();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * Moves the fake time past any linger and wakes the writer until it waits for records with none queued: by
   * then it has written every record queued before.
   */
  private static void settle(AuditLog log, FakeTime time) {
    waitFor(
        () -> {
          if (log.queued() == 0 && log.wakesAt() == 1) {
            return true;
          }
          time.advance(Duration.ofNanos(AuditWriter.MAX_LINGER_NANOS));
          log.wake();
          return false;
        });
  }

  /** Sleeps between looks ({@link Await}): a spinning test thread would take one of two cores from the writer. */
  private static void waitFor(java.util.function.BooleanSupplier condition) {
    try {
      Await.until("the audit writer", condition::getAsBoolean);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}
