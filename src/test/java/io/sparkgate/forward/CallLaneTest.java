package io.sparkgate.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class CallLaneTest {
  private final ExecutorService pool = Executors.newSingleThreadExecutor();
  private final List<String> events = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  @Test
  void cheapEventsRunOnTheCallingThread() {
    CallLane lane = new CallLane(pool);
    Thread caller = Thread.currentThread();
    List<Thread> ran = new CopyOnWriteArrayList<>();
    lane.run(() -> ran.add(Thread.currentThread()), false);
    lane.run(() -> ran.add(Thread.currentThread()), false);
    assertEquals(List.of(caller, caller), ran);
  }

  @Test
  void eventsBehindAnExpensiveOneWaitForItInOrder() throws Exception {
    CallLane lane = new CallLane(pool);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(1);
    List<Thread> ran = new CopyOnWriteArrayList<>();
    lane.run(() -> events.add("cheap-1"), false);
    lane.run(
        () -> {
          await(release);
          ran.add(Thread.currentThread());
          events.add("expensive");
        },
        true);
    // Cheap, but queued behind the expensive event: must neither run now nor overtake it.
    lane.run(
        () -> {
          ran.add(Thread.currentThread());
          events.add("cheap-2");
        },
        false);
    lane.run(
        () -> {
          events.add("cheap-3");
          done.countDown();
        },
        false);
    assertEquals(List.of("cheap-1"), events);
    release.countDown();
    assertTrue(done.await(30, TimeUnit.SECONDS));
    assertEquals(List.of("cheap-1", "expensive", "cheap-2", "cheap-3"), events);
    assertNotSame(Thread.currentThread(), ran.get(0));
    assertSame(ran.get(0), ran.get(1), "the queue drains on the pool thread");

    // Once drained, cheap events run inline again. (The last event has run, but the drain may not
    // have noticed the empty queue yet: it has once the pool's one thread runs the next task.)
    pool.submit(() -> {}).get(30, TimeUnit.SECONDS);
    lane.run(() -> events.add("cheap-4"), false);
    assertEquals("cheap-4", events.get(events.size() - 1));
  }

  @Test
  void aFailingEventDoesNotStrandTheOnesBehindIt() throws Exception {
    CallLane lane = new CallLane(pool);
    CountDownLatch done = new CountDownLatch(1);
    lane.run(
        () -> {
          throw new IllegalStateException("boom");
        },
        true);
    lane.run(done::countDown, false);
    assertTrue(done.await(30, TimeUnit.SECONDS));
  }

  @Test
  void aStoppedPoolRunsTheQueueOnTheCaller() {
    pool.shutdown();
    CallLane lane = new CallLane(pool);
    lane.run(() -> events.add("expensive"), true);
    lane.run(() -> events.add("after"), false);
    assertEquals(List.of("expensive", "after"), events);
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
