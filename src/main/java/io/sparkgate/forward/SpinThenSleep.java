package io.sparkgate.forward;

import io.grpc.netty.shaded.io.netty.channel.SelectStrategy;
import io.grpc.netty.shaded.io.netty.util.IntSupplier;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * How an event loop waits for I/O: when nothing is ready, it polls (without sleeping) for up to
 * {@code spin} before it sleeps in {@code epoll_wait}. A proxied call crosses the loop twice, once each way,
 * and the backend and the client each answer within tens of microseconds of the last message on a small call:
 * a loop that slept in between paid a sleep and a wake-up each time, which on a virtual machine costs more
 * than the loop's own work on the message (bench/README.md, sixteenth round).
 *
 * <p>The cost is CPU: a loop with nothing to do keeps a core for up to {@code spin} after its last event,
 * then sleeps as before. A loaded loop always has events and never spins. A task handed to the loop from
 * another thread while it spins waits for the spin to end (Netty wakes only a sleeping loop); only calls with
 * large request messages do that.
 */
final class SpinThenSleep implements SelectStrategy {
  private final long spinNanos;
  private final LongSupplier nanoTime;

  SpinThenSleep(Duration spin) {
    this(spin, System::nanoTime);
  }

  /** With {@code nanoTime} as the clock the spin is measured on (tests advance a fake one). */
  SpinThenSleep(Duration spin, LongSupplier nanoTime) {
    if (spin.isNegative() || spin.isZero()) {
      throw new IllegalArgumentException("spin must be positive, got " + spin);
    }
    this.spinNanos = spin.toNanos();
    this.nanoTime = nanoTime;
  }

  @Override
  public int calculateStrategy(IntSupplier selectNow, boolean hasTasks) throws Exception {
    int ready = selectNow.get();
    if (ready != 0 || hasTasks) {
      return ready;
    }
    long start = nanoTime.getAsLong();
    do {
      Thread.onSpinWait();
      ready = selectNow.get();
      if (ready != 0) {
        return ready;
      }
    } while (nanoTime.getAsLong() - start < spinNanos);
    return SelectStrategy.SELECT;
  }
}
