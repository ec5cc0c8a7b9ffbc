package io.sparkgate.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.netty.shaded.io.netty.channel.SelectStrategy;
import io.sparkgate.testing.FakeTime;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SpinThenSleepTest {
  @Test
  void readyEvents_handledAtOnce() throws Exception {
    AtomicInteger polls = new AtomicInteger();
    int strategy =
        new SpinThenSleep(Duration.ofSeconds(10))
            .calculateStrategy(
                () -> {
                  polls.incrementAndGet();
                  return 3;
                },
                false);
    assertEquals(3, strategy);
    assertEquals(1, polls.get());
  }

  @Test
  void queuedTasks_runAtOnceWithoutSpinning() throws Exception {
    AtomicInteger polls = new AtomicInteger();
    int strategy =
        new SpinThenSleep(Duration.ofSeconds(10))
            .calculateStrategy(
                () -> {
                  polls.incrementAndGet();
                  return 0;
                },
                true);
    assertEquals(0, strategy); // Netty's "nothing ready, run the tasks"
    assertEquals(1, polls.get());
  }

  @Test
  void eventsArrivingWhileSpinning_handledWithoutSleeping() throws Exception {
    AtomicInteger polls = new AtomicInteger();
    int strategy =
        new SpinThenSleep(Duration.ofSeconds(10))
            .calculateStrategy(() -> polls.incrementAndGet() < 5 ? 0 : 1, false);
    assertEquals(1, strategy);
    assertEquals(5, polls.get());
  }

  @Test
  void nothingWithinTheSpin_sleepsOnceTheBudgetHasPassed() throws Exception {
    // Each poll takes 100 us on the fake clock: the 2 ms budget is spent after the 20th poll of the
    // spin.
    FakeTime time = new FakeTime();
    AtomicInteger polls = new AtomicInteger();
    int strategy =
        new SpinThenSleep(Duration.ofMillis(2), time::read)
            .calculateStrategy(
                () -> {
                  polls.incrementAndGet();
                  time.advance(Duration.ofMillis(2).dividedBy(20));
                  return 0;
                },
                false);
    assertEquals(SelectStrategy.SELECT, strategy);
    assertEquals(
        1 + 20,
        polls.get(),
        "the poll before the spin, then the spin's polls until the budget ran out");
  }

  @Test
  void spinMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> new SpinThenSleep(Duration.ZERO));
    assertThrows(IllegalArgumentException.class, () -> new SpinThenSleep(Duration.ofNanos(-1)));
  }
}
