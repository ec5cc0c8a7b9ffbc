package io.sparkgate.audit;

import com.github.benmanes.caffeine.cache.Ticker;
import io.sparkgate.config.AuditConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit writer thread's work, one pass at a time: take what has queued, build and chain the records,
 * write them, force the file once per interval (group commit) and rotate it. A pass never waits; it says how
 * long the thread may wait before the next, on the injected ticker, so tests drive the writer on a fake one.
 * Writer thread only, apart from the counters.
 */
final class AuditWriter {
  private static final Logger log = LoggerFactory.getLogger(AuditWriter.class);

  /** The most records one pass takes from the queue. */
  static final int BATCH = 4096;

  /**
   * While records keep coming, the writer waits this long between batches and no call wakes it. Woken by
   * each record instead, it cost every call a futex wake-up on the request thread, a context switch and a
   * write(2): profiled at 60-70 us of CPU per small call, a quarter of what the full proxy spent on it.
   * Longer is not better: lingering one fsync_interval (100 ms) under fsync: batch made each batch's write a
   * burst of page-cache work that doubled full's p99 in a same-run A/B, with no gain at p50 or in CPU.
   */
  static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  /**
   * The longest linger. At a few hundred calls a second a 5 ms linger gathers two or three records, and each
   * batch then costs a wake-up and a write(2) for those few: profiled in place at about 700 calls/s, the
   * writer's park and write were 40% of its CPU. So the linger doubles while batches stay below
   * {@link #FULL_BATCH} records and halves back once they reach it. Records wait at most this long for the
   * file, half of fsync: batch's default interval.
   */
  static final long MAX_LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  /** A batch of this many records pays for its wake-up and write; fewer, and the linger grows. */
  static final int FULL_BATCH = 64;

  /**
   * The longest an idle writer waits: it looks again when a record comes, the fsync or the rotation by age is
   * due, or the log closes, but the rotation is timed on the wall clock, which may be set meanwhile.
   */
  static final long MAX_IDLE_NANOS = TimeUnit.MINUTES.toNanos(1);

  /** After a failed write, so that a full disk is not retried in a loop. */
  static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  /**
   * Until when, on the ticker, the thread may wait after a pass, unless {@code records} records are queued
   * first (or the log closes).
   */
  record Wait(long until, int records) {
    boolean over(long now, int queued) {
      return queued >= records || now - until >= 0;
    }
  }

  private final AuditConfig config;
  private final BlockingQueue<Supplier<Map<String, Object>>> queue;
  private final Clock clock;
  private final Ticker ticker;
  private final LogFile out;
  private final HashChain chain;
  private final Consumer<Path> rotated;

  /** A lingering writer looks again once this many records wait, rather than let the queue fill. */
  private final int backlog;

  private final RecordJson json = new RecordJson();
  private final List<Supplier<Map<String, Object>>> batch = new ArrayList<>(BATCH);
  private final AtomicLong written = new AtomicLong();
  private final AtomicLong lost = new AtomicLong();

  /** When the last write failed (ticker nanos); cleared by the next batch written. */
  private volatile long failedAt;

  private volatile boolean failing;
  private final AtomicLong syncs = new AtomicLong();
  private final AtomicLong batches = new AtomicLong();
  private int taken; // records of the current batch written or counted as lost
  private long linger = LINGER_NANOS;
  private boolean unsynced; // written since the last force (fsync: batch)
  private long lastSync;
  private boolean finished;

  /**
   * A writer of the records {@code queue} receives to {@code out}, continuing {@code chain}; each file it
   * rotates goes to {@code rotated}.
   */
  AuditWriter(
      AuditConfig config,
      BlockingQueue<Supplier<Map<String, Object>>> queue,
      Clock clock,
      Ticker ticker,
      LogFile out,
      HashChain chain,
      Consumer<Path> rotated) {
    this.config = config;
    this.queue = queue;
    this.clock = clock;
    this.ticker = ticker;
    this.out = out;
    this.chain = chain;
    this.rotated = rotated;
    this.backlog = Math.max(1, config.queueSize() / 2);
    this.lastSync = ticker.read();
  }

  /**
   * One pass: writes what has queued, forces and rotates the file when due, and returns how long the thread
   * may wait before the next. With {@code closing} and nothing left queued, it closes the file instead, and
   * {@link #finished} turns true.
   */
  Wait pass(boolean closing) {
    try {
      queue.drainTo(batch, BATCH);
      boolean wrote = !batch.isEmpty();
      if (wrote) {
        linger = nextLinger(linger, batch.size());
        batches.incrementAndGet();
        writeBatch();
        failing = false;
        unsynced = config.fsync() == AuditConfig.Fsync.BATCH;
      }
      long now = ticker.read();
      // fsync: batch is a group commit: at most one force per interval, for everything written
      // since the last.
      // A proxy serving one call at a time then does not pay one fsync per call (profiled, that
      // cost more CPU
      // than everything else the proxy did for the call); see AuditConfig.DEFAULT_FSYNC_INTERVAL.
      long syncDue = lastSync + config.fsyncInterval().toNanos();
      if (unsynced && now - syncDue >= 0) {
        force();
        lastSync = now;
        unsynced = false;
      }
      Instant wall = clock.instant();
      if (out.rotationDue(wall)) {
        rotate(wall);
      }
      if (closing && queue.isEmpty()) {
        finish();
        return new Wait(now, 0);
      }
      if (!queue.isEmpty()) {
        return new Wait(now, 0);
      }
      if (wrote) {
        return new Wait(
            now + linger, backlog); // let more gather rather than be woken for each (LINGER_NANOS)
      }
      long idle = now + Math.min(MAX_IDLE_NANOS, out.nanosUntilRotation(wall));
      return new Wait(unsynced ? Math.min(syncDue, idle) : idle, 1);
    } catch (IOException | RuntimeException e) {
      // Keep going: losing the disk for a moment must not lose the rest of the log.
      int unwritten = batch.size() - taken;
      log.error("audit write failed; {} records of this batch are lost", unwritten, e);
      lost.addAndGet(unwritten);
      failedAt = ticker.read();
      failing = true;
      batch.clear();
      taken = 0;
      return new Wait(ticker.read() + RETRY_NANOS, Integer.MAX_VALUE);
    }
  }

  /**
   * The linger after a batch of {@code records}: longer while batches are small, so that a moderate call rate
   * costs a wake-up per {@link #FULL_BATCH} records rather than per two or three, and shorter again once they
   * are full (a long linger at a high rate made each write a burst that doubled p99: see LINGER_NANOS).
   */
  static long nextLinger(long linger, int records) {
    return records < FULL_BATCH
        ? Math.min(MAX_LINGER_NANOS, linger * 2)
        : Math.max(LINGER_NANOS, linger / 2);
  }

  private void writeBatch() throws IOException {
    for (taken = 0; taken < batch.size(); taken++) {
      Map<String, Object> record;
      try {
        record = batch.get(taken).get();
      } catch (RuntimeException e) {
        // A bug in one record's builder must not cost the rest of the batch.
        log.error("audit record could not be built; dropped", e);
        lost.incrementAndGet();
        continue;
      }
      byte[] line = json.line(chain, record);
      out.append(line);
      chain.append(line);
      written.incrementAndGet();
      if (config.fsync() == AuditConfig.Fsync.ALWAYS) {
        force();
      }
      if (out.full()) {
        rotate(clock.instant());
      }
    }
    out.flush();
    batch.clear();
    taken = 0;
  }

  private void force() throws IOException {
    if (out.force()) {
      syncs.incrementAndGet();
    }
  }

  private void rotate(Instant now) throws IOException {
    Path file = out.rotate(now);
    log.info("audit log rotated to {}", file);
    rotated.accept(file);
  }

  private void finish() {
    finished = true;
    try {
      out.close();
    } catch (IOException e) {
      log.error("audit log could not be closed; its last records may not be on disk", e);
    }
  }

  /** Whether the log is closed: the thread stops. */
  boolean finished() {
    return finished;
  }

  long written() {
    return written.get();
  }

  /**
   * Whether a write failed within {@code window} and none has succeeded since. It expires so that a proxy taken
   * out of rotation for it, and so sent nothing to write, is tried again.
   */
  boolean failedWithin(long windowNanos) {
    return failing && ticker.read() - failedAt < windowNanos;
  }

  /** Records taken from the queue but not written: a builder failed, or the disk did. */
  long lost() {
    return lost.get();
  }

  long syncs() {
    return syncs.get();
  }

  long batches() {
    return batches.get();
  }
}
