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
import java.util.function.LongSupplier;
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

  /** Records refused before they reached the writer (a full queue): they too are reported in a gap record. */
  private final LongSupplier droppedBefore;

  private final RecordJson json = new RecordJson();
  private final List<Supplier<Map<String, Object>>> batch = new ArrayList<>(BATCH);
  private final AtomicLong written = new AtomicLong();
  private final AtomicLong lost = new AtomicLong();

  /** Whether the last write failed; cleared by the next one that reaches the file. */
  private volatile boolean failing;

  private HashChain.Head committedHead; // the chain as of the last record that reached the file
  private int pending; // records appended since the last commit
  private long
      reported; // losses (lost + droppedBefore) that a gap record in the file already states
  private long gapPending; // losses the gap record appended in this batch states (0: none appended)
  private Instant
      lossSince; // when losses not yet reported began (the last record written before them)
  private Instant lastCommit; // wall time of the last commit
  private String lossReason = "";
  private final AtomicLong syncs = new AtomicLong();
  private int taken; // records of the current batch written or counted as lost
  private long linger = LINGER_NANOS;
  private boolean unsynced; // written since the last force (fsync: batch)
  private long lastSync;
  private boolean finished;

  /**
   * A writer of the records {@code queue} receives to {@code out}, continuing {@code chain}; each file it
   * rotates goes to {@code rotated}. The log also reports the records {@code droppedBefore} counts as
   * refused by the queue.
   */
  AuditWriter(
      AuditConfig config,
      BlockingQueue<Supplier<Map<String, Object>>> queue,
      Clock clock,
      Ticker ticker,
      LogFile out,
      HashChain chain,
      Consumer<Path> rotated,
      LongSupplier droppedBefore) {
    this.config = config;
    this.queue = queue;
    this.clock = clock;
    this.ticker = ticker;
    this.out = out;
    this.chain = chain;
    this.rotated = rotated;
    this.backlog = Math.max(1, config.queueSize() / 2);
    this.lastSync = ticker.read();
    this.committedHead = chain.head();
    this.lastCommit = clock.instant();
    this.droppedBefore = droppedBefore;
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
      if (failing && !out.roomToWrite()) {
        // Still full: what came is lost without a write that could only half succeed (LogFile).
        lost.addAndGet(batch.size());
        noteLoss();
        batch.clear();
        if (closing && queue.isEmpty()) {
          finish();
          return new Wait(ticker.read(), 0);
        }
        return new Wait(ticker.read() + RETRY_NANOS, Integer.MAX_VALUE);
      }
      if (wrote || failing) {
        // After a failure the writer tries again on its own, with the gap record or none, so that a
        // proxy refusing calls (audit.required), and so sent no records, still sees the disk
        // recover.
        if (wrote) {
          linger = nextLinger(linger, batch.size());
        }
        writeBatch();
        if (failing && config.fsync() != AuditConfig.Fsync.NEVER) {
          force(); // a disk that failed must take a force again before the log counts as writing
        }
        if (failing) {
          log.warn("audit log writing again after a failure");
        }
        failing = false;
        unsynced = wrote && config.fsync() == AuditConfig.Fsync.BATCH;
      }
      long now = ticker.read();
      // fsync: batch is a group commit: at most one force per interval, for everything written
      // since the last. A proxy serving one call at a time then does not pay one fsync per call
      // (profiled, that cost more CPU than everything else the proxy did for the call); see
      // AuditConfig.DEFAULT_FSYNC_INTERVAL.
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
      // Keep going: losing the disk for a moment must not lose the rest of the log. What was
      // appended since the last commit never counts as written: the file is cut back to that commit
      // and the chain goes on from its last record, and a gap record states the loss once the disk
      // takes records again.
      int unwritten = pending + (batch.size() - taken);
      if (!failing) {
        log.error("audit write failed; {} records of this batch are lost", unwritten, e);
      } else if (unwritten > 0) {
        log.error("audit log still failing; {} more records lost: {}", unwritten, e.toString());
      }
      if (unwritten > 0 || !failing) {
        lossReason = "writing the audit log failed: " + e.getMessage();
      }
      lost.addAndGet(unwritten);
      noteLoss();
      failing = true;
      batch.clear();
      taken = 0;
      pending = 0;
      gapPending = 0;
      chain.reset(committedHead);
      try {
        out.recover();
      } catch (IOException | RuntimeException again) {
        log.debug("audit log could not be reopened yet", again);
      }
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
    noteLoss();
    long unreported = lost.get() + droppedBefore.getAsLong() - reported;
    if (unreported > 0) {
      appendGap(unreported);
    }
    for (taken = 0; taken < batch.size(); taken++) {
      Map<String, Object> record;
      try {
        record = batch.get(taken).get();
      } catch (RuntimeException e) {
        // A bug in one record's builder must not cost the rest of the batch.
        log.error("audit record could not be built; dropped", e);
        lost.incrementAndGet();
        lossReason = "an audit record could not be built";
        noteLoss();
        continue;
      }
      append(json.line(chain, record));
      pending++;
      if (config.fsync() == AuditConfig.Fsync.ALWAYS) {
        commit();
        force();
      }
      if (out.full()) {
        commit();
        rotate(clock.instant());
      }
    }
    commit();
    batch.clear();
    taken = 0;
  }

  private void append(byte[] line) throws IOException {
    out.append(line);
    chain.append(line);
  }

  /**
   * Records that never reached the file (a full queue, a failed write, a builder's bug) leave no hole in the
   * chain, which goes on from the last record written; this record says how many are missing and when they
   * went missing, so that {@code sparkgate audit verify} shows the gap where it is.
   */
  private void appendGap(long count) throws IOException {
    Map<String, Object> gap = AuditLog.newRecord();
    Instant now = clock.instant();
    gap.put("time", now.toString());
    gap.put("event", GAP_EVENT);
    gap.put("records_lost", count);
    gap.put("lost_since", (lossSince == null ? lastCommit : lossSince).toString());
    gap.put("lost_until", now.toString());
    gap.put(
        "reason",
        lossReason.isEmpty() ? "the audit queue was full (audit.queue_size)" : lossReason);
    append(json.line(chain, gap));
    gapPending = count;
  }

  /** The {@code event} of a record that states lost records. */
  static final String GAP_EVENT = "audit_gap";

  /** Remembers when losses began, the first time there are some not yet reported. */
  private void noteLoss() {
    if (lossSince == null && lost.get() + droppedBefore.getAsLong() > reported) {
      lossSince = lastCommit;
    }
  }

  /** Everything appended so far is in the file: it counts as written, and a failure no longer undoes it. */
  private void commit() throws IOException {
    out.commit();
    committedHead = chain.head();
    lastCommit = clock.instant();
    written.addAndGet(pending);
    pending = 0;
    if (gapPending > 0) {
      reported += gapPending;
      gapPending = 0;
      if (lost.get() + droppedBefore.getAsLong() == reported) {
        lossSince = null;
        lossReason = "";
      }
    }
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
      if (lost.get() + droppedBefore.getAsLong() > reported) {
        writeBatch(); // the last gap record, so that a loss is never only in a counter
      }
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

  /** Whether the last write failed and none has reached the file since (the writer retries on its own). */
  boolean failing() {
    return failing;
  }

  /** Records taken from the queue but not written: a builder failed, or the disk did. */
  long lost() {
    return lost.get();
  }

  long syncs() {
    return syncs.get();
  }
}
