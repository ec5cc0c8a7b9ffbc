package io.sparkgate.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.netty.shaded.io.netty.channel.SelectStrategy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SpinThenSleepTest {
  @Test
  void readyEvents_handledAtOnce() throws Exception {
    AtomicInteger polls = new AtomicInteger();
    int strategy = new SpinThenSleep(Duration.ofSeconds(10)).calculateStrategy(() -> {
      polls.incrementAndGet();
      return 3;
    }, false);
    assertEquals(3, strategy);
    assertEquals(1, polls.get());
  }

  @Test
  void queuedTasks_runAtOnceWithoutSpinning() throws Exception {
    AtomicInteger polls = new AtomicInteger();
    int strategy = new SpinThenSleep(Duration.ofSeconds(10)).calculateStrategy(() -> {
      polls.incrementAndGet();
      return 0;
    }, true);
    assertEquals(0, strategy); // Netty's "nothing ready, run the tasks"
    assertEquals(1, polls.get());
  }

  @Test
  void eventsArrivingWhileSpinning_handledWithoutSleeping() throws Exception {
    AtomicInteger polls = new AtomicInteger();
    int strategy = new SpinThenSleep(Duration.ofSeconds(10)).calculateStrategy(
        () -> polls.incrementAndGet() < 5 ? 0 : 1, false);
    assertEquals(1, strategy);
    assertEquals(5, polls.get());
  }

  @Test
  void nothingWithinTheSpin_sleeps() throws Exception {
    long start = System.nanoTime();
    int strategy = new SpinThenSleep(Duration.ofMillis(2)).calculateStrategy(() -> 0, false);
    assertEquals(SelectStrategy.SELECT, strategy);
    assertTrue(System.nanoTime() - start >= Duration.ofMillis(2).toNanos(), "spun for the whole budget");
  }

  @Test
  void spinMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> new SpinThenSleep(Duration.ZERO));
    assertThrows(IllegalArgumentException.class, () -> new SpinThenSleep(Duration.ofNanos(-1)));
  }
}
