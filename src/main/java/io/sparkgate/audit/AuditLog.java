package io.sparkgate.audit;

import com.github.benmanes.caffeine.cache.Ticker;
import io.sparkgate.config.AuditConfig;
import java.io.IOException;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tamper-evident audit log: one JSON line per record, each carrying its sequence number and the
 * SHA-256 of the line before it. Request threads only enqueue (never block); one writer thread builds,
 * chains and writes the records in batches ({@link AuditWriter}). {@link #close()} writes everything still
 * queued.
 */
public final class AuditLog implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(AuditLog.class);

  /** The {@link #wakeAt} of a writer that is not waiting: no record wakes it. */
  private static final int RUNNING = Integer.MAX_VALUE;

  private final AuditConfig config;
  private final Ticker ticker;
  private final BlockingQueue<Supplier<Map<String, Object>>> queue;
  private final Compressor compressor; // null for stdout
  private final AuditWriter writer;
  private final Thread thread;
  private final AtomicLong dropped = new AtomicLong();
  private volatile boolean closing;

  /**
   * A record that brings the queue to this length wakes the writer thread: 1 while it waits for records, half
   * the queue while it lingers between batches; none while it runs, since it looks at the queue before waiting.
   */
  private volatile int wakeAt = RUNNING;

  private AuditLog(AuditConfig config, Clock clock, Ticker ticker) throws IOException {
    this.config = config;
    this.ticker = ticker;
    this.queue = new ArrayBlockingQueue<>(config.queueSize());
    AuditFiles files = config.file().map(AuditFiles::new).orElse(null);
    if (files == null) {
      compressor = null;
      writer =
          new AuditWriter(
              config,
              queue,
              clock,
              ticker,
              LogFile.stdout(),
              HashChain.start(),
              rotated -> {},
              dropped::get);
    } else {
      HashChain chain = HashChain.resume(files);
      LogFile out = LogFile.append(files, config.maxFileSize(), config.rotateInterval(), clock);
      compressor = new Compressor();
      files
          .interruptedRotations()
          .forEach(compressor::compressLater); // rotated before a stop or crash
      writer =
          new AuditWriter(
              config, queue, clock, ticker, out, chain, compressor::compressLater, dropped::get);
    }
    this.thread = new Thread(this::run, "sparkgate-audit");
    thread.setDaemon(true);
    thread.start();
  }

  /** Opens (or continues) the log the configuration names. */
  public static AuditLog open(AuditConfig config, Clock clock) throws IOException {
    return open(config, clock, Ticker.systemTicker());
  }

  /** The same with the writer's waits (linger, group commit) measured on {@code ticker}. */
  static AuditLog open(AuditConfig config, Clock clock, Ticker ticker) throws IOException {
    if (!config.enabled()) {
      throw new IllegalArgumentException("audit is disabled in this configuration");
    }
    return new AuditLog(config, clock, ticker);
  }

  /**
   * Queues one record (the log takes ownership of the map); false when the queue is full, in which case
   * the record is counted as dropped.
   */
  public boolean write(Map<String, Object> record) {
    return write(() -> record);
  }

  /**
   * Queues a record that the writer thread builds: formatting, hashing and UUIDs then cost the thread that
   * served the call nothing. {@code record} must only read state that no longer changes. False when the
   * queue is full, in which case the record is counted as dropped.
   */
  public boolean write(Supplier<Map<String, Object>> record) {
    if (closing || !queue.offer(record)) {
      dropped.incrementAndGet();
      return false;
    }
    int wake = wakeAt; // read after queueing: see await
    if (wake != RUNNING && queue.size() >= wake) {
      LockSupport.unpark(thread);
    }
    return true;
  }

  /** Records waiting for the writer thread. */
  public int queued() {
    return queue.size();
  }

  /**
   * Whether a new record would currently be accepted and written; {@code audit.required} refuses calls
   * otherwise. False while the last write failed (a full or failing disk) until the writer, which tries again
   * on its own, gets a write through.
   */
  public boolean accepting() {
    return !closing && queue.remainingCapacity() > 0 && !writer.failing();
  }

  /**
   * Why the log cannot take records now (its queue is full, it is closing, or the last write failed and none
   * has succeeded since), or empty when it can.
   */
  public Optional<String> problem() {
    if (closing) return Optional.of("the audit log is closing");
    if (queue.remainingCapacity() == 0) return Optional.of("the audit queue is full");
    if (writer.failing()) {
      return Optional.of("writing the audit log failed (see the log)");
    }
    return Optional.empty();
  }

  /** Records lost: refused by a full queue, or taken by the writer and not written (see {@link AuditWriter#lost}). */
  public long dropped() {
    return dropped.get() + writer.lost();
  }

  public long written() {
    return writer.written();
  }

  /** How often the writer has forced the file to disk while running (fsync: batch or always). */
  public long syncs() {
    return writer.syncs();
  }

  public AuditConfig config() {
    return config;
  }

  /** Makes a waiting writer look at the queue and the time again (after a fake ticker moved, in tests). */
  void wake() {
    LockSupport.unpark(thread);
  }

  /** How many queued records wake the writer now: what it is waiting for, for tests ({@link #RUNNING}: none). */
  int wakesAt() {
    return wakeAt;
  }

  /** Writes every queued record, forces it to disk, and stops the writer. */
  @Override
  public void close() {
    closing = true;
    wake();
    try {
      thread.join(TimeUnit.MINUTES.toMillis(2));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.isAlive()) {
      log.error(
          "audit writer did not finish within 2 minutes; {} records may be lost", queue.size());
    } else if (!queue.isEmpty()) {
      // Queued by a call that saw the log open a moment before close() began, after the writer's
      // last look.
      dropped.addAndGet(queue.size());
      log.error("audit: {} records queued as the log closed were not written", queue.size());
    }
    if (compressor != null) {
      compressor.close();
    }
  }

  private void run() {
    try {
      while (true) {
        // Read before the pass: once closing is set, write() refuses records, so a closing pass
        // that finds the queue empty has seen the last one (but for one that raced close(), which
        // close() counts).
        boolean last = closing;
        AuditWriter.Wait wait = writer.pass(last);
        if (writer.finished()) {
          return;
        }
        await(wait);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Parks until the wait is over or the log closes. {@link #wakeAt} is lowered before the queue is read, and
   * {@link #write} reads it after queueing, so a record queued in between is never missed.
   */
  private void await(AuditWriter.Wait wait) throws InterruptedException {
    wakeAt = wait.records();
    try {
      for (long now = ticker.read();
          !closing && !wait.over(now, queue.size());
          now = ticker.read()) {
        LockSupport.parkNanos(this, wait.until() - now);
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
      }
    } finally {
      wakeAt = RUNNING;
    }
  }

  /** An ordered record under construction, for callers that build one field at a time. */
  public static Map<String, Object> newRecord() {
    return new LinkedHashMap<>(
        64); // a call's record has about 25 fields: no resizing while it is built
  }
}
