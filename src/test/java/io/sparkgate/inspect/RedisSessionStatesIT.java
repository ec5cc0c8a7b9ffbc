package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.redis.Redis;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RedisSessionStates} against a real Redis, each replica on a connection of its own: the shared-store
 * scenarios the unit tests run in memory, races decided in Redis, and an outage answered as unavailable.
 */
final class RedisSessionStatesIT {
  @TempDir static Path dir;
  private static RedisServer server;
  private static final List<Redis> open = new ArrayList<>();

  @BeforeAll
  static void startRedis() throws Exception {
    server = RedisServer.start(dir.resolve("redis"));
  }

  @AfterAll
  static void stop() throws Exception {
    for (Redis r : open) r.close();
    server.close();
  }

  /** A replica's store: a connection of its own, on pool {@code pool}. */
  private static RedisSessionStates store(String pool) {
    Redis redis = Redis.connect(server.config(Duration.ofMillis(500)));
    open.add(redis);
    return new RedisSessionStates(redis, pool, Duration.ofMinutes(10));
  }

  /** The scenarios share one store by replica pair; the trackers read through two connections. */
  private static SessionStates pair(String pool) {
    RedisSessionStates one = store(pool);
    RedisSessionStates two = store(pool);
    return new Alternating(one, two);
  }

  @Test
  void replicasShareSessionsAndCacheOwners() {
    SharedStoreScenarios.replicasShareSessionsAndCacheOwners(pair("shares"));
  }

  @Test
  void cacheEntriesAreClaimedWhenForwarded() {
    SharedStoreScenarios.cacheEntriesAreClaimedWhenForwarded(pair("claims"));
  }

  @Test
  void concurrentChangesToOneSessionAreAllKept() throws Exception {
    SharedStoreScenarios.concurrentChangesToOneSessionAreAllKept(pair("concurrent"));
  }

  @Test
  void aChangeTheStoreDidNotTakeRefusesTheSession() {
    SharedStoreScenarios.aChangeTheStoreDidNotTakeRefusesTheSession(pair("lost"));
  }

  @Test
  void aRaceForOneCacheEntry_hasOneWinner() throws Exception {
    List<RedisSessionStates> replicas = List.of(store("race"), store("race"), store("race"));
    ExecutorService pool = Executors.newFixedThreadPool(6);
    try {
      for (int round = 0; round < 20; round++) {
        String key = "spark_catalog.sales.t" + round;
        List<Future<Boolean>> claims = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
          RedisSessionStates r = replicas.get(i % 3);
          String entry = "0&u&s" + i + "&" + key;
          claims.add(pool.submit(() -> r.claim(key, entry)));
        }
        int won = 0;
        for (Future<Boolean> c : claims) won += c.get() ? 1 : 0;
        assertEquals(1, won, key);
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(20, replicas.get(0).entries().entries().size());
    assertEquals(0, store("another-pool").entries().entries().size(), "pools do not share caches");
  }

  @Test
  void redisDown_isUnavailable_andBackItServesAgain_butNotASessionWhoseStateItLost()
      throws Exception {
    RedisSessionStates states = store("outage");
    Inspector inspector = new Inspector();
    SessionTracker tracker =
        new SessionTracker(
            () -> BackendProfile.UNKNOWN,
            Duration.ofMinutes(10),
            com.github.benmanes.caffeine.cache.Ticker.systemTicker(),
            states);
    Answered.request(tracker, "u", "o", inspector.inspectSql("USE lake", tracker.view("u", "o")));
    assertEquals("lake", tracker.view("u", "o").currentDatabase());
    server.stop(); // killed without persistence: what it held is gone
    try {
      long start = System.nanoTime();
      assertThrows(SessionStates.Unavailable.class, () -> tracker.view("u", "o").currentDatabase());
      assertTrue(
          Duration.ofNanos(System.nanoTime() - start).compareTo(Duration.ofSeconds(2)) < 0,
          "fails within the timeout, not hanging");
    } finally {
      server.start();
    }
    Await.until(
        "Redis serving again",
        Duration.ofSeconds(10),
        () -> {
          try {
            return tracker.view("u", "fresh").currentDatabase().equals("default");
          } catch (SessionStates.Unavailable e) {
            return false;
          }
        });
    // Spark still has the session in lake; read as fresh, it would be misread: refused instead.
    SessionStates.Lost lost =
        assertThrows(SessionStates.Lost.class, () -> tracker.view("u", "o").currentDatabase());
    assertTrue(lost.getMessage().contains("no longer holds"), lost.getMessage());
    assertEquals(
        "default", tracker.view("u", "fresh").currentDatabase(), "a new session is served");
  }

  /** Reads and writes through two connections in turn, as the calls of one session reach two replicas. */
  private static final class Alternating implements SessionStates {
    private final SessionStates[] stores;
    private final java.util.concurrent.atomic.AtomicInteger next =
        new java.util.concurrent.atomic.AtomicInteger();

    Alternating(SessionStates one, SessionStates two) {
      this.stores = new SessionStates[] {one, two};
    }

    private SessionStates any() {
      return stores[Math.floorMod(next.getAndIncrement(), 2)];
    }

    @Override
    public Read read(String userId, String sessionId) {
      return any().read(userId, sessionId);
    }

    @Override
    public String update(
        String userId, String sessionId, java.util.function.UnaryOperator<String> change) {
      return any().update(userId, sessionId, change);
    }

    @Override
    public Entries entries() {
      return any().entries();
    }

    @Override
    public boolean claim(String key, String entry) {
      return any().claim(key, entry);
    }

    @Override
    public boolean replace(String key, String expected, String entry) {
      return any().replace(key, expected, entry);
    }
  }
}
