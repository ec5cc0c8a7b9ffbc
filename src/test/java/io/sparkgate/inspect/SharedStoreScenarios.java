package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.UnaryOperator;

/**
 * What two replicas of a pool must agree on through a {@link SessionStates} store, run against each store
 * (in memory by the unit tests, a real Redis by {@code RedisSessionStatesIT}): each scenario builds its own
 * trackers, as two replicas, on the store it is given, and uses sessions no other scenario uses.
 */
final class SharedStoreScenarios {
  private SharedStoreScenarios() {}

  private static final BackendProfile PROFILE =
      new BackendProfile(
          "4.0.0", List.of(), Map.of("iceberg", "org.apache.iceberg.spark.SparkCatalog"), null);
  private static final Inspector INSPECTOR = new Inspector();

  private static SessionTracker replica(SessionStates store) {
    return new SessionTracker(() -> PROFILE, Duration.ofMinutes(30), Ticker.systemTicker(), store);
  }

  static void replicasShareSessionsAndCacheOwners(SessionStates store) {
    SessionTracker one = replica(store);
    SessionTracker two = replica(store);
    assertEquals("default", two.view("u", "a").currentDatabase(), "nothing stored");
    sql(one, "a", "USE iceberg.lake");
    assertEquals("iceberg", two.view("u", "a").currentCatalog(), "read by the next call");
    assertEquals("lake", two.view("u", "a").currentDatabase());
    sql(two, "a", "CREATE TEMPORARY FUNCTION f() RETURNS INT RETURN 1");
    assertEquals(true, one.view("u", "a").isSessionFunction("F"));
    assertEquals("lake", one.view("u", "a").currentDatabase(), "the state as a whole");

    sql(one, "a", "CACHE TABLE spark_catalog.sales.orders");
    sql(two, "b", "CACHE TABLE spark_catalog.sales.orders"); // cached already: not b's
    assertNull(uncache(two, "b", "UNCACHE TABLE spark_catalog.sales.orders"));
    assertNull(uncache(one, "b", "UNCACHE TABLE spark_catalog.sales.orders"));
    assertEquals("true", uncache(two, "a", "UNCACHE TABLE spark_catalog.sales.orders"));
    sql(two, "a", "UNCACHE TABLE spark_catalog.sales.orders");
    assertNull(uncache(one, "a", "UNCACHE TABLE spark_catalog.sales.orders"), "dropped");
    sql(one, "b", "CACHE TABLE spark_catalog.sales.orders");
    assertEquals("true", uncache(two, "b", "UNCACHE TABLE spark_catalog.sales.orders"), "b's now");

    one.forget("u", "a");
    assertEquals("spark_catalog", two.view("u", "a").currentCatalog(), "released everywhere");
    assertEquals(false, two.view("u", "a").isSessionFunction("f"));
  }

  /**
   * Spark registers a cache entry when the request starts, so the entry is claimed in the store when the
   * request is forwarded: a second session's CACHE TABLE forwarded meanwhile through the other replica, and
   * answered first, does not make it the owner; a refused one gives the claim back.
   */
  static void cacheEntriesAreClaimedWhenForwarded(SessionStates store) {
    SessionTracker one = replica(store);
    SessionTracker two = replica(store);
    String cache = "CACHE TABLE spark_catalog.sales.claimed";
    String uncache = "UNCACHE TABLE spark_catalog.sales.claimed";
    SessionTracker.Change first = forwarded(one, "c", cache);
    SessionTracker.Change second = forwarded(two, "d", cache);
    two.apply(second); // answered first: Spark found the entry there already
    assertNull(uncache(two, "d", uncache));
    assertNull(uncache(one, "c", uncache), "not confirmed before its answer");
    one.apply(first);
    assertEquals("true", uncache(two, "c", uncache), "the first session's, on either replica");
    assertNull(uncache(one, "d", uncache));

    // Refused by Spark: the claim is given back, and the next session to cache it owns it.
    String other = "CACHE TABLE spark_catalog.sales.refused";
    SessionTracker.Change refused = forwarded(one, "e", other);
    assertNull(claimed(two, "f", other), "claimed by e while its request runs");
    one.abandon(refused);
    SessionTracker.Change next = forwarded(two, "f", other);
    two.apply(next);
    assertEquals("true", uncache(one, "f", "UNCACHE TABLE spark_catalog.sales.refused"));
  }

  /** Two replicas changing one session at once (a client with two threads): neither change is lost. */
  static void concurrentChangesToOneSessionAreAllKept(SessionStates store) throws Exception {
    SessionTracker one = replica(store);
    SessionTracker two = replica(store);
    int each = 25;
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int i = 0; i < each; i++) {
        for (SessionTracker t : List.of(one, two)) {
          String name = (t == one ? "one_" : "two_") + i;
          done.add(
              pool.submit(
                  () ->
                      sql(
                          t,
                          "g",
                          "CREATE TEMPORARY FUNCTION " + name + "() RETURNS INT RETURN 1")));
        }
      }
      for (Future<?> f : done) f.get();
    } finally {
      pool.shutdownNow();
    }
    SessionView view = two.view("u", "g");
    for (int i = 0; i < each; i++) {
      assertTrue(view.isSessionFunction("one_" + i), "one_" + i);
      assertTrue(view.isSessionFunction("two_" + i), "two_" + i);
    }
  }

  /**
   * Spark answered a change the store did not take: the store's state is stale, so the replica refuses the
   * session from then on rather than read it wrongly; a call the store cannot serve is UNAVAILABLE.
   */
  static void aChangeTheStoreDidNotTakeRefusesTheSession(SessionStates store) {
    Failing failing = new Failing(store);
    SessionTracker one = replica(failing);
    SessionTracker two = replica(failing);
    SessionTracker.Change use = forwarded(one, "h", "USE iceberg.lake");
    failing.down = true;
    // What the backend's profile answers needs no read: a call that asks nothing of the session's
    // state
    // is served while the store is away.
    assertEquals(true, two.view("u", "h").isCatalog("iceberg"));
    for (int i = 0; i < 2; i++) { // read, then from the facts kept for any state
      Facts plain = INSPECTOR.inspectSql("SELECT 1 + 1", two.view("u", "h"));
      assertEquals(List.of(), plain.ofKind(Fact.Kind.UNCLASSIFIED), "no name to resolve: no read");
    }
    assertThrows(
        SessionStates.Unavailable.class,
        () -> INSPECTOR.inspectSql("SELECT * FROM t", two.view("u", "h")),
        "a name to resolve in the session's namespace");
    assertThrows(SessionStates.Unavailable.class, () -> one.apply(use));
    assertThrows(SessionStates.Unavailable.class, () -> two.view("u", "h").currentDatabase());
    failing.down = false;
    SessionStates.Lost lost =
        assertThrows(SessionStates.Lost.class, () -> one.view("u", "h").currentCatalog());
    assertTrue(lost.getMessage().contains("could not be recorded"), lost.getMessage());
    // However the inspector handles the failure inside, the call is answered for it.
    SessionView[] seen = new SessionView[1];
    assertThrows(
        SessionStates.Lost.class,
        () ->
            INSPECTOR.inspect(
                "ExecutePlan",
                sqlRequest("u", "h", "SELECT * FROM t"),
                (SessionViews)
                    (user, session) -> {
                      seen[0] = one.view(user, session);
                      return seen[0];
                    },
                null));
    assertThrows(SessionStates.Lost.class, () -> SessionTracker.requireRead(seen[0]));
    assertEquals("spark_catalog", two.view("u", "h").currentCatalog(), "as the store has it");
    one.forget("u", "h"); // released: a new start
    assertEquals("default", one.view("u", "h").currentDatabase());
  }

  /** A store that fails while {@link #down}, as Redis does when it is unreachable. */
  private static final class Failing implements SessionStates {
    private final SessionStates store;
    volatile boolean down;

    Failing(SessionStates store) {
      this.store = store;
    }

    private void check() {
      if (down) throw new Unavailable("down", null);
    }

    @Override
    public Read read(String userId, String sessionId) {
      check();
      return store.read(userId, sessionId);
    }

    @Override
    public String update(String userId, String sessionId, UnaryOperator<String> change) {
      check();
      return store.update(userId, sessionId, change);
    }

    @Override
    public Entries entries() {
      check();
      return store.entries();
    }

    @Override
    public boolean claim(String key, String entry) {
      check();
      return store.claim(key, entry);
    }

    @Override
    public boolean replace(String key, String expected, String entry) {
      check();
      return store.replace(key, expected, entry);
    }
  }

  private static byte[] sqlRequest(String user, String session, String sql) {
    return io.sparkgate.proto.spark.ExecutePlanRequest.newBuilder()
        .setSessionId(session)
        .setUserContext(io.sparkgate.proto.spark.UserContext.newBuilder().setUserId(user))
        .setPlan(
            io.sparkgate.proto.spark.Plan.newBuilder()
                .setCommand(
                    io.sparkgate.proto.spark.Command.newBuilder()
                        .setSqlCommand(
                            io.sparkgate.proto.spark.SqlCommand.newBuilder().setSql(sql))))
        .build()
        .toByteArray();
  }

  private static SessionTracker.Change forwarded(SessionTracker t, String session, String text) {
    Facts facts = INSPECTOR.inspectSql(text, t.view("u", session));
    return Optional.ofNullable(t.changes("ExecutePlan", "u", session, facts)).orElseThrow();
  }

  private static String claimed(SessionTracker t, String session, String text) {
    SessionTracker.Change c = forwarded(t, session, text);
    t.apply(c);
    return uncache(t, session, text.replace("CACHE", "UNCACHE"));
  }

  private static void sql(SessionTracker tracker, String session, String text) {
    Answered.request(tracker, "u", session, INSPECTOR.inspectSql(text, tracker.view("u", session)));
  }

  private static String uncache(SessionTracker tracker, String session, String text) {
    return INSPECTOR
        .inspectSql(text, tracker.view("u", session))
        .ofKind(Fact.Kind.CATALOG_OP)
        .get(0)
        .get("owned_by_session");
  }
}
