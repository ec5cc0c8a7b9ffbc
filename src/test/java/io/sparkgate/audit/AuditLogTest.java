package io.sparkgate.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgate.config.AuditConfig;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

final class AuditLogTest {
  @TempDir Path dir;

  private AuditConfig config(long maxFileSize, int queueSize) {
    return new AuditConfig(true, Optional.of(dir.resolve("audit.jsonl")), maxFileSize, Duration.ofDays(1),
        queueSize, AuditConfig.Fsync.BATCH, AuditConfig.DEFAULT_FSYNC_INTERVAL, false, false);
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
    return new AuditConfig(true, Optional.of(dir.resolve("audit.jsonl")), 1L << 30, Duration.ofDays(1), 1000,
        AuditConfig.Fsync.BATCH, interval, false, false);
  }

  private static void awaitWritten(AuditLog log, long n) throws InterruptedException {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (log.written() < n && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertEquals(n, log.written());
  }

  @Test
  void fsyncBatch_forcesOncePerInterval_notPerRecord() throws Exception {
    try (AuditLog log = AuditLog.open(batchEvery(Duration.ofMinutes(1)), Clock.systemUTC())) {
      for (int i = 0; i < 50; i++) {
        log.write(record(i));
      }
      awaitWritten(log, 50);
      Thread.sleep(300);
      assertEquals(0, log.syncs(), "written, but the minute has not passed: no fsync yet");
    }
    Files.delete(dir.resolve("audit.jsonl"));
    try (AuditLog log = AuditLog.open(batchEvery(Duration.ofMillis(10)), Clock.systemUTC())) {
      for (int i = 0; i < 50; i++) {
        log.write(record(i));
      }
      awaitWritten(log, 50);
      long deadline = System.nanoTime() + 5_000_000_000L;
      while (log.syncs() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertTrue(log.syncs() >= 1, "forced within the interval after the records were written");
      assertTrue(log.syncs() <= 10, "one fsync per batch, not one per record: " + log.syncs());
    }
  }

  @Test
  void linger_growsWhileBatchesAreSmall_andShrinksOnceTheyAreFull() {
    long linger = AuditLog.LINGER_NANOS;
    List<Long> seen = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      linger = AuditLog.nextLinger(linger, 3);
      seen.add(linger / 1_000_000);
    }
    assertEquals(List.of(10L, 20L, 40L, 50L, 50L, 50L), seen, "ms; doubles up to the 50 ms cap");
    linger = AuditLog.nextLinger(linger, AuditLog.FULL_BATCH);
    assertEquals(25, linger / 1_000_000);
    for (int i = 0; i < 5; i++) {
      linger = AuditLog.nextLinger(linger, 5_000);
    }
    assertEquals(AuditLog.LINGER_NANOS, linger, "full batches bring it back to 5 ms, no lower");
  }

  @Test
  void aModerateRate_isWrittenInFewBatches() throws Exception {
    // 300 records at about 300 a second: a fixed 5 ms linger took a batch (a wake-up and a write) per one or
    // two of them; the growing linger gathers tens.
    try (AuditLog log = AuditLog.open(batchEvery(Duration.ofMillis(100)), Clock.systemUTC())) {
      long start = System.nanoTime();
      for (int i = 0; i < 300; i++) {
        log.write(record(i));
        Thread.sleep(3);
      }
      long elapsedMs = (System.nanoTime() - start) / 1_000_000;
      awaitWritten(log, 300);
      // Bounded by the time the writes took (a loaded machine sleeps longer than 3 ms): at the 50 ms cap a
      // batch per 50 ms, with room; a fixed 5 ms linger would take one per 5 ms.
      long bound = elapsedMs / 20 + 10;
      assertTrue(log.batches() < bound, "batches: " + log.batches() + " in " + elapsedMs + " ms, bound " + bound);
    }
    assertEquals(300, Files.readAllLines(dir.resolve("audit.jsonl")).size());
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
    assertTrue(lines.get(0).startsWith("{\"seq\":1,\"prev\":\"" + HashChain.GENESIS + "\""), lines.get(0));
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
    assertTrue(files.subList(0, files.size() - 1).stream().allMatch(f -> f.toString().endsWith(".jsonl.gz")),
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
      assertTrue(names.stream().filter(n -> !n.equals("audit.jsonl")).allMatch(n -> n.endsWith(".jsonl.gz")),
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
    MutableClock clock = new MutableClock();
    AuditConfig cfg = new AuditConfig(true, Optional.of(dir.resolve("audit.jsonl")), 1L << 30,
        Duration.ofHours(1), 1000, AuditConfig.Fsync.NEVER, AuditConfig.DEFAULT_FSYNC_INTERVAL, false, false);
    try (AuditLog log = AuditLog.open(cfg, clock)) {
      log.write(record(1));
      waitForWritten(log, 1);
      clock.now = clock.now.plus(Duration.ofHours(2));
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

  private static void assertBroken(Path file, List<String> lines, String where, String what) throws IOException {
    Files.write(file, lines, StandardCharsets.UTF_8);
    AuditVerifier.Result result = AuditVerifier.verify(List.of(file));
    assertFalse(result.ok());
    assertTrue(result.message().contains(where) && result.message().contains(what), result.message());
  }

  private int rotatedCount() {
    try {
      return new AuditFiles(dir.resolve("audit.jsonl")).rotated().size();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static void waitForWritten(AuditLog log, long n) {
    waitFor(() -> log.written() >= n);
  }

  /** Sleeps between looks: a spinning test thread would take one of two cores from the writer it waits for. */
  private static void waitFor(java.util.function.BooleanSupplier condition) {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not reached in 30 s");
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted", e);
      }
    }
  }

  /** A value the record writer does not encode itself: ObjectMapper's to write. */
  record Rewrite(String rule, int changes) {}

  /** The record writer's own map and list encoding must give exactly the JSON ObjectMapper gives. */
  @Test
  void nestedValuesAreWrittenAsObjectMapperWritesThem() throws IOException {
    Map<String, Object> summary = new LinkedHashMap<>();
    summary.put("kinds", List.of("rpc:ExecutePlan", "sql:query"));
    summary.put("tables", new TreeSet<>(Set.of("b", "a \"quoted\" \u00e9\n")));
    summary.put("nested", new TreeMap<>(Map.of("n", 3, "big", 1L << 40, "flag", true)));
    summary.put("none", null);
    summary.put("empty", List.of());
    summary.put("ratio", 0.25);
    summary.put("rewrite", new Rewrite("iceberg", 2));
    ObjectMapper mapper = new ObjectMapper();
    StringWriter ours = new StringWriter();
    try (JsonGenerator json = mapper.getFactory().createGenerator(ours)) {
      AuditLog.writeValue(json, summary);
    }
    assertEquals(mapper.writeValueAsString(summary), ours.toString());
    assertTrue(ours.toString().startsWith("{\"kinds\":[\"rpc:ExecutePlan\",\"sql:query\"],"), ours.toString());
  }

  private static final class MutableClock extends Clock {
    volatile Instant now = Instant.parse("2026-11-30T00:00:00Z");

    @Override
    public ZoneOffset getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }
}
