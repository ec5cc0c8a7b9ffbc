package io.sparkgate.audit;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the audit writer as {@code SCHED_IDLE} while it keeps up, and as {@code SCHED_BATCH} once it falls
 * behind. On Linux 6.6+ a running thread of the default or batch policy keeps the rest of its slice (about
 * 0.7 ms) against an event loop woken on its core; an idle-policy thread gives the core up at once. The writer's
 * batches are a few hundred microseconds of one core every linger, and as an idle thread it took 58 us off full's
 * closed-loop p99 in every round (bench/README.md, eighteenth round). But an idle thread gets almost no CPU
 * while the cores are busy: at saturation it fell behind and the queue overflowed. So the threads that queue
 * records ask for it to be moved back to batch once the queue passes a high-water mark or its oldest record has
 * waited too long, and the writer idles again only after a second of keeping up.
 *
 * <p>Leaving {@code SCHED_IDLE} needs {@code CAP_SYS_NICE} or an {@code RLIMIT_NICE} of 20 (systemd's
 * {@code LimitNICE=+0}). {@link #probe} tries the round trip on a throwaway thread; without it the writer stays a
 * batch thread, as it was before, and never risks being stuck idle.
 */
final class AdaptiveWriter {
  private static final Logger log = LoggerFactory.getLogger(AdaptiveWriter.class);
  /** Records older than this make the writer a batch thread whatever the queue's length. */
  static final long MAX_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  /** How long the writer keeps up as a batch thread before it idles again. */
  static final long CALM_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final int highWater;
  /** Records in the queue now (read by the writer only, at start and after each drain). */
  private final IntSupplier backlog;
  private final Thread booster;
  private final AtomicBoolean boostWanted = new AtomicBoolean();
  /** The writer runs as SCHED_IDLE (written by the writer and the booster). */
  private volatile boolean idle;
  /** When the first record queued since the writer's last drain was queued; 0: none since. */
  private volatile long waitingSince;
  private volatile String writerTid;
  /** Moves from idle to batch so far (written by the booster only). */
  private volatile long boosts;
  private volatile boolean closed;
  // Writer thread only.
  private long batchSince;
  // Booster thread only.
  private boolean warned;

  private AdaptiveWriter(int highWater, IntSupplier backlog) {
    this.highWater = highWater;
    this.backlog = backlog;
    this.booster = new Thread(this::boostLoop, "sparkgate-boost");
    booster.setDaemon(true);
    booster.start();
  }

  /**
   * An adaptive policy for a queue of {@code queueSize} whose length {@code backlog} reads, or null where a
   * thread cannot leave SCHED_IDLE (not Linux, no chrt, or no privilege for it), in which case the writer should
   * stay a batch thread.
   */
  static AdaptiveWriter probe(int queueSize, IntSupplier backlog) {
    CompletableFuture<Boolean> roundTrip = new CompletableFuture<>();
    Thread t = new Thread(() -> roundTrip.complete(
        BackgroundPriority.idleCurrentThread() && BackgroundPriority.batchCurrentThread()), "sparkgate-probe");
    t.setDaemon(true);
    t.start();
    boolean can;
    try {
      can = roundTrip.get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      can = false;
    }
    if (!can) {
      log.info("audit writer runs as SCHED_BATCH: this process may not move a thread back from SCHED_IDLE "
          + "(that needs CAP_SYS_NICE or LimitNICE=+0), so it never idles");
      return null;
    }
    return new AdaptiveWriter(Math.max(1, Math.min(1_000, queueSize / 4)), backlog);
  }

  /** On the writer thread, first thing: it starts idle. */
  void writerStarted() {
    try {
      writerTid = BackgroundPriority.threadId();
    } catch (IOException e) {
      log.info("audit writer runs as SCHED_BATCH: {}", e.toString());
      BackgroundPriority.batchCurrentThread();
      return;
    }
    idle = BackgroundPriority.idleCurrentThread();
    // Records queued before idle was set found a batch writer and started no clock: start it for them.
    startClockIfWaiting();
    LockSupport.unpark(booster); // it starts watching for records left waiting
  }

  /**
   * Starts the wait's clock when records are queued and none has started it. The order matters: idle is set, or
   * waitingSince cleared, before the queue is read, so a record queued after the read starts the clock itself
   * in {@link #queued} and one queued before it is seen here; either way none waits unseen by the booster.
   */
  private void startClockIfWaiting() {
    if (idle && backlog.getAsInt() > 0 && waitingSince == 0) {
      waitingSince = System.nanoTime();
    }
  }

  /**
   * After a record was queued, with the queue's length then: wakes the booster when the writer is behind. A
   * batch writer costs the calling thread one volatile read here.
   */
  void queued(int queueLength) {
    if (!idle) {
      return;
    }
    long now = System.nanoTime();
    long since = waitingSince;
    if (since == 0) {
      waitingSince = now;
    } else if (now - since > MAX_WAIT_NANOS || queueLength >= highWater) {
      if (boostWanted.compareAndSet(false, true)) {
        LockSupport.unpark(booster);
      }
    }
  }

  /**
   * On the writer thread, after each drain of the queue, with the number of records it took. A batch writer
   * that has taken under a quarter of the high-water mark at every drain for a second is keeping up with room.
   */
  void drained(int records) {
    waitingSince = 0;
    if (idle) {
      // A record queued between the drain and the line above had its clock cleared with it.
      startClockIfWaiting();
      return;
    }
    if (writerTid == null) {
      return;
    }
    boolean calm = records < Math.max(1, highWater / 4);
    long now = System.nanoTime();
    if (!calm || batchSince == 0) {
      batchSince = calm ? now : 0;
    } else if (now - batchSince >= CALM_NANOS) {
      batchSince = 0;
      idle = BackgroundPriority.idleCurrentThread();
      boostWanted.set(false);
      // The booster parked without a timeout while the writer was a batch thread; it looks again now.
      LockSupport.unpark(booster);
    }
  }

  /**
   * On the writer thread, last thing before it returns: there is no thread left to move, so a move that fails
   * from now on is no sign of records waiting (at close the writer is hurried, and may finish first).
   */
  void writerStopped() {
    writerTid = null;
  }

  /** Moves an idle writer back to batch now: at close, everything queued is written at once. */
  void hurry() {
    boostWanted.set(true);
    LockSupport.unpark(booster);
  }

  long boosts() {
    return boosts;
  }

  void close() {
    closed = true;
    LockSupport.unpark(booster);
  }

  /**
   * Waits for a request from {@link #queued}, and while the writer idles also looks every {@link #MAX_WAIT_NANOS}
   * for records left waiting: {@code queued} only notices the wait when a later record arrives, and after a
   * burst on a busy machine none may come, leaving the burst unwritten behind the idle policy. The look is a
   * few wake-ups a second, off the calls' path.
   */
  private void boostLoop() {
    while (!closed) {
      if (idle) {
        LockSupport.parkNanos(this, MAX_WAIT_NANOS);
      } else {
        LockSupport.park(this);
      }
      long since = waitingSince;
      boolean late = since != 0 && System.nanoTime() - since > MAX_WAIT_NANOS;
      String tid = writerTid;
      if ((boostWanted.get() || late) && idle && tid != null) {
        if (BackgroundPriority.batchThread(tid)) {
          idle = false;
          boosts++;
          log.debug("audit writer behind: now SCHED_BATCH");
        } else if (writerTid == null) {
          // The writer finished (at close, hurried) while chrt looked for it: nothing was left behind.
          log.debug("audit writer stopped before it could be moved to SCHED_BATCH");
        } else if (!warned) {
          // Tried again at the next look while records wait; said once.
          warned = true;
          log.warn("audit writer behind and could not be moved back from SCHED_IDLE; records may be dropped");
        }
      }
    }
  }
}
