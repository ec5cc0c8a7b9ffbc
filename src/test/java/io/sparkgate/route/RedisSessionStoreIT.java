package io.sparkgate.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.config.SessionsConfig;
import io.sparkgate.redis.Redis;
import io.sparkgate.redis.RedisUnavailableException;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.RedisServer;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RedisSessionStore} against a real Redis, each store on a {@link Redis} connection of its own as two
 * replicas have: they agree on every placement however they race, placements expire when idle, and an
 * outage makes the blocking calls fail fast and the fire-and-forget ones fail silently, until Redis is back.
 */
final class RedisSessionStoreIT {
  private static final Duration TIMEOUT = Duration.ofMillis(500);
  private static final Duration IDLE = Duration.ofMinutes(10);

  /** Fails fast: four times the timeout, so a loaded machine does not fail it but a hang does. */
  private static final Duration FAST = Duration.ofSeconds(2);

  /** How long Redis may take to be usable again once it answers: Redis tries once a second. */
  private static final Duration BACK = Duration.ofSeconds(3);

  /**
   * Long enough that Lettuce's default backoff (doubling up to 30 s) would have tried last at 8.2 s and try
   * next at 16.4 s, 7 s after Redis is back: beyond {@link #BACK}.
   */
  private static final Duration OUTAGE = Duration.ofSeconds(9);

  private static final Placement A = new Placement("default", "spark-a:15002");
  private static final Placement B = new Placement("default", "spark-b:15002");

  @TempDir Path dir;

  private RedisServer server;
  private final Deque<AutoCloseable> open = new ArrayDeque<>();

  @BeforeEach
  void startRedis() throws Exception {
    server = RedisServer.start(dir.resolve("redis"));
  }

  @AfterEach
  void closeAll() throws Exception {
    while (!open.isEmpty()) open.pop().close();
    server.close();
  }

  private SessionsConfig config() {
    return new SessionsConfig(
        SessionsConfig.Store.REDIS,
        Optional.of(URI.create(server.url())),
        Optional.empty(),
        TIMEOUT,
        IDLE);
  }

  private Redis connect() {
    Redis redis = Redis.connect(config());
    open.push(redis);
    return redis;
  }

  private RedisSessionStore store(Redis redis, Duration idle) {
    RedisSessionStore store = new RedisSessionStore(redis, idle);
    open.push(store);
    return store;
  }

  private static SessionKey key(String session) {
    return new SessionKey("alice", session);
  }

  @Test
  void placed_onOneReplica_isFoundByTheOther_andForgottenForBoth() throws Exception {
    RedisSessionStore one = store(connect(), IDLE);
    RedisSessionStore two = store(connect(), IDLE);

    assertEquals(Optional.empty(), two.find(key("s1")));
    assertEquals(A, one.place(key("s1"), A));
    assertEquals(Optional.of(A), two.find(key("s1")));
    assertEquals(A, two.place(key("s1"), B), "placed already: the second replica gets the first's");
    assertEquals(Optional.empty(), two.find(new SessionKey("bob", "s1")), "another user's session");

    one.forget(key("s1"));
    Await.until("forgotten on the other replica", () -> two.find(key("s1")).isEmpty());
    assertEquals(B, two.place(key("s1"), B), "placed afresh once forgotten");
  }

  @Test
  void racingReplicas_agreeOnOneWinner() throws Exception {
    RedisSessionStore one = store(connect(), IDLE);
    RedisSessionStore two = store(connect(), IDLE);
    ExecutorService threads = Executors.newFixedThreadPool(2);
    open.push(threads::shutdownNow);
    int rounds = 200;
    int aWon = 0;
    for (int i = 0; i < rounds; i++) {
      SessionKey key = key("race-" + i);
      CountDownLatch go = new CountDownLatch(1);
      Future<Placement> first = threads.submit(() -> placeAfter(go, one, key, A));
      Future<Placement> second = threads.submit(() -> placeAfter(go, two, key, B));
      go.countDown();
      Placement p1 = first.get(30, TimeUnit.SECONDS);
      Placement p2 = second.get(30, TimeUnit.SECONDS);
      assertEquals(p1, p2, "round " + i + ": the replicas disagree");
      assertEquals(Optional.of(p1), one.find(key));
      assertEquals(Optional.of(p1), two.find(key));
      if (p1.equals(A)) aWon++;
    }
    // Not asserted (the scheduler decides), but a race that one side always won would test little.
    System.out.printf("racingReplicas: A won %d of %d rounds%n", aWon, rounds);
  }

  private static Placement placeAfter(
      CountDownLatch go, RedisSessionStore store, SessionKey key, Placement p)
      throws InterruptedException {
    go.await();
    return store.place(key, p);
  }

  @Test
  void idlePlacement_expires_andTouchesKeepItAlive() throws Exception {
    Duration idle = Duration.ofSeconds(1);
    RedisSessionStore one = store(connect(), idle);
    RedisSessionStore two = store(connect(), idle);

    long placed = System.nanoTime();
    one.place(key("idle"), A);
    Await.until("the untouched placement expires", () -> two.find(key("idle")).isEmpty());
    long lived = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - placed);
    assertTrue(lived >= idle.toMillis(), "expired after " + lived + " ms, before the idle timeout");

    one.place(key("used"), A);
    long start = System.nanoTime();
    // Used for 2.5 idle timeouts, from either replica: a touch restarts the timer for both.
    for (int i = 0; System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(2500); i++) {
      (i % 2 == 0 ? one : two).touch(key("used"));
      assertEquals(
          Optional.of(A), one.find(key("used")), "touched, yet gone after " + i + " touches");
      TimeUnit.MILLISECONDS.sleep(200);
    }
    Await.until("expires once no longer touched", () -> one.find(key("used")).isEmpty());
    System.out.printf("idle: untouched placement lived %d ms (idle timeout 1000 ms)%n", lived);
  }

  @Test
  void restartedReplica_findsThePlacements() {
    try (Redis before = Redis.connect(config());
        RedisSessionStore store = new RedisSessionStore(before, IDLE)) {
      store.place(key("kept"), A);
    }

    RedisSessionStore after = store(connect(), IDLE);
    assertEquals(Optional.of(A), after.find(key("kept")));
    assertEquals(A, after.place(key("kept"), B));
  }

  @Test
  void unreadableValue_isAbsent_andReplacedByAPlacement() {
    Redis redis = connect();
    RedisSessionStore store = store(redis, IDLE);
    String k = key("junk").storeKey();
    redis.call(c -> c.set(k, "not a placement"));

    assertEquals(Optional.empty(), store.find(key("junk")));
    assertEquals(B, store.place(key("junk"), B));
    assertEquals(Optional.of(B), store.find(key("junk")));
  }

  @Test
  void redisDown_failsFast_andTheSameStoreWorksOnceItIsBack() throws Exception {
    Redis redis = connect();
    RedisSessionStore store = store(redis, IDLE);
    store.place(key("before"), A);

    server.stop();
    long down = System.nanoTime();
    // The first commands meet the dying connection, later ones the reconnecting client.
    long worst = 0;
    while (System.nanoTime() - down < OUTAGE.toNanos()) {
      worst = Math.max(worst, failsFast("find", () -> store.find(key("before"))));
      worst = Math.max(worst, failsFast("place", () -> store.place(key("during"), B)));
      worst = Math.max(worst, returnsAtOnce("touch", () -> store.touch(key("before"))));
      worst = Math.max(worst, returnsAtOnce("forget", () -> store.forget(key("before"))));
      TimeUnit.MILLISECONDS.sleep(300);
    }

    server.start();
    long back = backAfter(store);
    // A restarted Redis without persistence has lost every placement: sessions are placed again.
    assertEquals(Optional.empty(), store.find(key("before")));
    assertEquals(B, store.place(key("before"), B));
    assertEquals(Optional.of(B), store(connect(), IDLE).find(key("before")));
    assertTrue(redis.errors() > 0, "the failures are counted");
    System.out.printf(
        "outage: slowest failure %d ms; usable %d ms after Redis was back%n", worst, back);
  }

  @Test
  void redisStartedAfterTheProxy_isConnectedOnceUp() throws Exception {
    server.stop();
    long t0 = System.nanoTime();
    Redis redis = connect(); // must not throw: a proxy starts without its Redis
    long created = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertTrue(
        created < FAST.toMillis(), "connecting to a Redis that is down took " + created + " ms");
    RedisSessionStore store = store(redis, IDLE);
    failsFast("find", () -> store.find(key("late")));
    returnsAtOnce("touch", () -> store.touch(key("late")));

    server.start();
    long back = backAfter(store);
    assertEquals(A, store.place(key("late"), A));
    assertEquals(Optional.of(A), store(connect(), IDLE).find(key("late")));
    System.out.printf(
        "late start: created in %d ms; usable %d ms after Redis was up%n", created, back);
  }

  /** Millis the call took to throw {@link RedisUnavailableException}; fails when slower than {@link #FAST}. */
  private static long failsFast(String what, Executable call) {
    long t0 = System.nanoTime();
    assertThrows(RedisUnavailableException.class, call, what + " with Redis down");
    long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertTrue(took < FAST.toMillis(), what + " took " + took + " ms to fail");
    return took;
  }

  /** Millis a fire-and-forget call took; it must neither throw nor wait on Redis. */
  private static long returnsAtOnce(String what, Runnable call) {
    long t0 = System.nanoTime();
    call.run();
    long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertTrue(took < TIMEOUT.toMillis(), what + " blocked for " + took + " ms");
    return took;
  }

  /** Millis until {@code store} answers again; fails after {@link #BACK}. */
  private static long backAfter(RedisSessionStore store) throws Exception {
    long t0 = System.nanoTime();
    Await.until("the same store works again", BACK, () -> answers(store));
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
  }

  private static boolean answers(RedisSessionStore store) {
    try {
      store.find(key("probe"));
      return true;
    } catch (RedisUnavailableException e) {
      return false;
    }
  }
}
