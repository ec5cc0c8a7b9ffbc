package io.sparkgate.forward;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one call's client-side events in order: on the event loop that delivered them while they are cheap,
 * and on a worker pool from the first expensive one (a large SQL text to parse, say) until the queue behind
 * it is empty. Small calls never leave their loop; a large one cannot stall the other connections of that
 * loop while it is inspected.
 *
 * <p>gRPC delivers a call's events one at a time from its transport thread, so the only concurrency here is
 * between that thread and a drain on the pool: while a drain runs, every new event queues behind it.
 */
final class CallLane {
  private static final Logger log = LoggerFactory.getLogger(CallLane.class);

  private final Executor pool;

  @GuardedBy("this")
  private final ArrayDeque<Runnable> queued = new ArrayDeque<>();

  @GuardedBy("this")
  private boolean draining;

  CallLane(Executor pool) {
    this.pool = pool;
  }

  /** Runs {@code event} now if nothing is queued and it is cheap, else after the queued events, on the pool. */
  void run(Runnable event, boolean expensive) {
    synchronized (this) {
      if (draining || expensive) {
        queued.add(event);
        if (draining) {
          return;
        }
        draining = true;
      }
    }
    if (!expensive) {
      event.run();
      return;
    }
    try {
      pool.execute(this::drain);
    } catch (RejectedExecutionException e) {
      // The proxy is stopping: better to finish the call here than to leave its events queued
      // forever.
      drain();
    }
  }

  private void drain() {
    while (true) {
      Runnable event;
      synchronized (this) {
        event = queued.poll();
        if (event == null) {
          draining = false;
          return;
        }
      }
      try {
        event.run();
      } catch (RuntimeException e) {
        // The events behind it (the cancellation, the close) must still run, or the call would
        // hang.
        log.error("call event failed", e);
      }
    }
  }
}
