package io.sparkgate.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sparkgate.config.AuditConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BackgroundPriorityTest {
  /** Linux's number for the policy (include/uapi/linux/sched.h). */
  static final int SCHED_BATCH = 3;
  static final int SCHED_IDLE = 5;

  @Test
  void lowersOnlyTheCallingThread() throws Exception {
    assumeLinuxWith("renice");
    int before = nice(Path.of("/proc/thread-self"));
    String mainTid = BackgroundPriority.threadId();

    CompletableFuture<int[]> background = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        String tid = BackgroundPriority.threadId();
        boolean lowered = BackgroundPriority.lowerCurrentThread();
        background.complete(new int[] {lowered ? 1 : 0, nice(Path.of("/proc/thread-self")), Integer.parseInt(tid)});
      } catch (Exception e) {
        background.completeExceptionally(e);
      }
    });
    t.start();
    int[] result = background.get(30, TimeUnit.SECONDS);

    assertEquals(1, result[0], "renice reported failure");
    assertEquals(BackgroundPriority.NICE, result[1], "the background thread's own nice value");
    assertNotEquals(mainTid, Integer.toString(result[2]), "threads have ids of their own");
    // Linux keeps nice per thread: the thread that started it (and so the event loops) keep theirs.
    assertEquals(before, nice(Path.of("/proc/thread-self")));
  }

  @Test
  void batchesOnlyTheCallingThread() throws Exception {
    int[] result = changeAThread(BackgroundPriority::batchCurrentThread, SCHED_BATCH);
    assertEquals(0, result[1], "a batch thread keeps the default nice value, and so its share of CPU");
  }

  @Test
  void idlesOnlyTheCallingThread() throws Exception {
    changeAThread(BackgroundPriority::idleCurrentThread, SCHED_IDLE);
  }

  /**
   * Runs {@code change} on a new thread, checks that it reported success and that the thread, and only it, now
   * has {@code policy}; returns its policy and nice value.
   */
  private static int[] changeAThread(BooleanSupplier change, int policy) throws Exception {
    assumeLinuxWith("chrt");
    int before = policy(Path.of("/proc/thread-self"));

    CompletableFuture<int[]> background = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        boolean changed = change.getAsBoolean();
        Path self = Path.of("/proc/thread-self");
        background.complete(new int[] {changed ? 1 : 0, policy(self), nice(self)});
      } catch (Exception e) {
        background.completeExceptionally(e);
      }
    });
    t.start();
    int[] result = background.get(30, TimeUnit.SECONDS);

    assertEquals(1, result[0], "chrt reported failure");
    assertEquals(policy, result[1], "the background thread's own policy");
    assertEquals(before, policy(Path.of("/proc/thread-self")), "the thread that started it keeps its policy");
    return new int[] {result[1], result[2]};
  }

  @Test
  void rotatedFilesAreCompressedByAnIdleThread(@TempDir Path dir) throws Exception {
    assumeLinuxWith("chrt");
    try (AuditLog log = AuditLog.open(config(dir, 8 * 1024), Clock.systemUTC())) {
      for (int i = 0; i < 500; i++) {
        Map<String, Object> r = AuditLog.newRecord();
        r.put("n", i);
        r.put("pad", "x".repeat(100));
        log.write(r);
      }
      assertEquals(SCHED_IDLE, awaitThread("sparkgate-gzip", BackgroundPriorityTest::policy, SCHED_IDLE),
          "the compressor thread's scheduling policy");
    }
    try (Stream<Path> files = Files.list(dir)) {
      assertTrue(files.anyMatch(f -> f.toString().endsWith(".jsonl.gz")), "a rotated file was compressed");
    }
  }

  static void assumeLinuxWith(String program) {
    assumeTrue(System.getProperty("os.name", "").startsWith("Linux"), "per-thread scheduling is Linux only");
    assumeTrue(Files.isExecutable(Path.of("/usr/bin", program)) || Files.isExecutable(Path.of("/bin", program)),
        "no " + program + " on this machine");
  }

  static AuditConfig config(Path dir, long maxFileSize) {
    return new AuditConfig(true, Optional.of(dir.resolve("audit.jsonl")), maxFileSize, Duration.ofDays(1), 10_000,
        AuditConfig.Fsync.NEVER, AuditConfig.DEFAULT_FSYNC_INTERVAL, false, false);
  }

  /**
   * The field of the named thread once it is {@code expected}, or what it was after 30 s (null: no such thread).
   * The proxy's threads start with the default scheduling and change their own first thing: this waits for that.
   */
  static Integer awaitThread(String name, StatField field, int expected) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    Integer value = statOfThread(name, field);
    while (!Integer.valueOf(expected).equals(value) && System.nanoTime() < deadline) {
      Thread.sleep(10);
      value = statOfThread(name, field);
    }
    return value;
  }

  interface StatField {
    int of(Path task) throws IOException;
  }

  /** A field of this process's thread of that name, or null while there is none. */
  static Integer statOfThread(String name, StatField field) throws IOException {
    try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
      for (Path task : tasks.toList()) {
        try {
          if (Files.readString(task.resolve("comm")).trim().equals(name)) {
            return field.of(task);
          }
        } catch (NoSuchFileException e) {
          // the thread ended meanwhile
        }
      }
    }
    return null;
  }

  /**
   * A thread's nice value from its /proc directory: field 19 of stat, counting from the pid, after the command
   * name, which is in parentheses and may itself hold spaces (state is field 3).
   */
  static int nice(Path task) throws IOException {
    return statField(task, 19);
  }

  /** A thread's scheduling policy: field 41 of stat (0 SCHED_OTHER, 3 SCHED_BATCH, 5 SCHED_IDLE). */
  static int policy(Path task) throws IOException {
    return statField(task, 41);
  }

  private static int statField(Path task, int field) throws IOException {
    String stat = Files.readString(task.resolve("stat"));
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Integer.parseInt(fields[field - 3]);
  }
}
