package io.sparkgate.quota;

import static io.sparkgate.quota.QuotaCalls.execute;
import static io.sparkgate.quota.QuotaCalls.limits;
import static io.sparkgate.quota.QuotaCalls.open;
import static io.sparkgate.quota.QuotaCalls.principal;
import static io.sparkgate.quota.QuotaCalls.quotas;
import static io.sparkgate.quota.QuotaCalls.resultComplete;
import static io.sparkgate.quota.QuotaCalls.uuid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.benmanes.caffeine.cache.Ticker;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.Principal;
import io.sparkgate.config.QuotasConfig;
import io.sparkgate.config.QuotasConfig.Limits;
import io.sparkgate.quota.QuotaCalls.Open;
import io.sparkgate.redis.Redis;
import io.sparkgate.redis.RedisUnavailableException;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.RedisServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shared quotas against a real Redis: two quota stages on two Redis connections are two replicas. Limits
 * hold across both under concurrent load, a replica that stops frees its slots after the lease, a Redis
 * outage falls back to counting per replica and recovers, and starting an ExecutePlan costs one command.
 */
final class QuotaRedisIT {
  /** Shorter than the configuration allows (5 s), so that expiry is seen within the test. */
  private static final Duration LEASE = Duration.ofSeconds(2);

  @TempDir Path dir;
  private RedisServer server;
  private final List<AutoCloseable> closing = new ArrayList<>();
  private final String session = uuid();

  @BeforeEach
  void startRedis() throws Exception {
    server = RedisServer.start(dir.resolve("redis"));
  }

  @AfterEach
  void stop() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) closing.get(i).close();
    server.close();
  }

  private Redis connect() {
    Redis redis = Redis.connect(server.config(Duration.ofSeconds(2)));
    closing.add(redis);
    return redis;
  }

  /** A replica: its own Redis connection and its background thread. */
  private QuotaStage replica(QuotasConfig config) {
    QuotaStage stage =
        QuotaStage.create(
            config, Optional.of(connect()), Ticker.systemTicker(), Duration.ofMillis(100));
    closing.add(stage);
    return stage;
  }

  private Open start(QuotaStage stage, Principal who) throws StatusException {
    Open call = open(stage, "ExecutePlan", who);
    return call.refused(execute(who, session, uuid(), true)) == null ? call : null;
  }

  @Test
  void concurrentOperations_holdAcrossReplicas_andOtherPrincipalsAreUnaffected() throws Exception {
    QuotasConfig config = quotas(limits(3, 0, 0, 0), Limits.NONE, LEASE);
    QuotaStage a = replica(config);
    QuotaStage b = replica(config);
    Principal alice = principal("alice", "acme");
    Principal bob = principal("bob", "acme");

    assertNotNull(start(a, alice));
    assertNotNull(start(a, alice));
    assertNotNull(start(b, alice));
    assertNull(start(a, alice), "three held, two of them on the other replica");
    assertNull(start(b, alice));
    for (int i = 0; i < 3; i++) assertNotNull(start(b, bob), "bob's own three");
    assertEquals(2, a.heldOperations());
    assertEquals(4, b.heldOperations());
  }

  @Test
  void concurrentLoad_fromSeveralPrincipals_neverExceedsTheLimit() throws Exception {
    int limit = 3;
    QuotasConfig config = quotas(limits(limit, 0, 0, 0), Limits.NONE, LEASE);
    QuotaStage[] replicas = {replica(config), replica(config)};
    String[] names = {"p0", "p1", "p2", "p3"};
    int workersEach = 6;
    Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
    Map<String, AtomicInteger> most = new ConcurrentHashMap<>();
    Map<String, AtomicLong> admitted = new ConcurrentHashMap<>();
    AtomicLong refused = new AtomicLong();
    for (String n : names) {
      running.put(n, new AtomicInteger());
      most.put(n, new AtomicInteger());
      admitted.put(n, new AtomicLong());
    }
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    ExecutorService pool = Executors.newFixedThreadPool(names.length * workersEach);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (String n : names) {
        for (int w = 0; w < workersEach; w++) {
          QuotaStage replica = replicas[w % 2];
          Principal who = principal(n, "tenant-" + n);
          workers.add(
              pool.submit(
                  () -> {
                    while (System.nanoTime() < until) {
                      String op = uuid();
                      Open call = open(replica, "ExecutePlan", who);
                      StatusException e = call.refused(execute(who, session, op, true));
                      if (e != null) {
                        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
                        refused.incrementAndGet();
                        Thread.sleep(1);
                        continue;
                      }
                      admitted.get(n).incrementAndGet();
                      int now = running.get(n).incrementAndGet();
                      most.get(n).accumulateAndGet(now, Math::max);
                      Thread.sleep(ThreadLocalRandom.current().nextInt(1, 6));
                      running.get(n).decrementAndGet(); // before its slot is given back
                      if (ThreadLocalRandom.current().nextBoolean()) {
                        call.respond(resultComplete(session, op));
                        call.close(Status.OK);
                      } else {
                        call.close(Status.INTERNAL.withDescription("[FAILED] it failed"));
                      }
                    }
                    return null;
                  }));
        }
      }
      for (Future<?> f : workers) f.get(30, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    Map<String, Integer> peaks = new TreeMap<>();
    most.forEach((n, m) -> peaks.put(n, m.get()));
    for (String n : names) {
      assertTrue(most.get(n).get() <= limit, "peaks " + peaks);
      assertTrue(admitted.get(n).get() > 10, n + " admitted " + admitted.get(n));
    }
    assertTrue(refused.get() > 0, "the load exceeded the limit: some starts must be refused");
    assertEquals(0, replicas[0].localFallbacks() + replicas[1].localFallbacks());
  }

  @Test
  void aReplicaThatStops_freesItsSlots_afterTheLease() throws Exception {
    QuotasConfig config = quotas(limits(3, 0, 0, 0), Limits.NONE, LEASE);
    QuotaStage a = replica(config);
    QuotaStage b = replica(config);
    Principal alice = principal("alice", null);
    assertNotNull(start(a, alice));
    assertNotNull(start(a, alice));
    assertNotNull(start(b, alice)); // stays open on the replica that lives on
    a.close(); // as if it crashed: its streams are never closed, nothing is given back

    long stopped = System.nanoTime();
    assertNull(start(b, alice));
    Await.until(
        "the stopped replica's slots to run out their lease", () -> start(b, alice) != null);
    long waited = System.nanoTime() - stopped;
    assertTrue(waited > LEASE.toNanos() / 2, "freed after " + waited / 1_000_000 + " ms");
    // Its other slot too (each was renewed last at its own time, a few milliseconds apart).
    Await.until("the stopped replica's second slot", () -> start(b, alice) != null);
    assertNull(start(b, alice), "three held again, all on the live replica");

    // The live replica renews its own: after several leases they are all still held.
    Thread.sleep(3 * LEASE.toMillis());
    assertNull(start(b, alice));
  }

  @Test
  void withRedisDown_eachReplicaCountsAlone_andSharesAgainOnceItIsBack() throws Exception {
    QuotasConfig config = quotas(limits(1, 0, 0, 0), Limits.NONE, Duration.ofSeconds(30));
    QuotaStage a = replica(config);
    QuotaStage b = replica(config);
    Principal alice = principal("alice", null);
    assertTrue(a.shared() && b.shared());
    Open first = start(a, alice);
    assertNotNull(first);
    assertNull(start(b, alice), "shared: the one slot is taken");

    server.stop();
    Open onB = start(b, alice); // Redis fails fast; B decides alone and knows of no operation
    assertNotNull(onB);
    assertFalse(b.shared());
    assertEquals(1, b.localFallbacks());
    assertNull(start(b, alice), "B's own limit holds while alone");
    assertNull(start(a, alice), "A finds Redis gone too, and counts its own operation");
    assertFalse(a.shared());

    server.start(); // empty: what Redis held is gone
    // A replica shares again once it has registered what it holds: alice now holds 2 of 1.
    Await.until("both replicas sharing again", () -> a.shared() && b.shared());
    assertNull(start(a, alice));
    assertNull(start(b, alice));
    long fallbacks = a.localFallbacks() + b.localFallbacks();

    first.respond(resultComplete(session, "x")).close(Status.OK);
    onB.close(Status.INTERNAL);
    Await.until("the slots given back in Redis", () -> start(b, alice) != null);
    assertNull(start(a, alice), "shared again: the slot B just took counts on A");
    assertEquals(fallbacks, a.localFallbacks() + b.localFallbacks(), "decided by Redis");
  }

  @Test
  void aRedisThatRestarts_isToldAgainWhatTheReplicasHold() throws Exception {
    QuotasConfig config = quotas(limits(1, 0, 0, 0), Limits.NONE, Duration.ofSeconds(3));
    Redis redis = connect();
    QuotaStage a = QuotaStage.unscheduled(config, Optional.of(redis), Ticker.systemTicker());
    QuotaStage b = QuotaStage.unscheduled(config, Optional.of(connect()), Ticker.systemTicker());
    a.tick();
    b.tick();
    Principal alice = principal("alice", null);
    assertNotNull(start(a, alice));

    server.stop();
    server.start(); // between two ticks: empty, and perhaps no command failed meanwhile
    String held = Shared.operationsKey(false, "alice");
    Await.until(
        "replica A to register its operation again",
        () -> {
          a.tick();
          try {
            return a.shared() && redis.call(c -> c.zcard(held)) == 1;
          } catch (RedisUnavailableException notYet) {
            return false;
          }
        });
    assertNull(start(b, alice), "the restarted Redis counts A's operation");

    redis.call(c -> c.scriptFlush()); // scripts Redis forgot are sent whole
    assertNotNull(start(b, principal("bob", null)));
  }

  @Test
  void theRate_isSharedAcrossReplicas_throughTheSync_andOvershootIsPaidBack() throws Exception {
    QuotasConfig config = quotas(limits(0, 1, 10, 0), Limits.NONE, LEASE);
    QuotaStage a = QuotaStage.unscheduled(config, Optional.of(connect()), Ticker.systemTicker());
    QuotaStage b = QuotaStage.unscheduled(config, Optional.of(connect()), Ticker.systemTicker());
    Principal alice = principal("alice", null);
    // Between two syncs each replica admits from its own view of the bucket: both spend the burst.
    for (QuotaStage replica : new QuotaStage[] {a, b}) {
      for (int i = 0; i < 10; i++) {
        assertNull(
            open(replica, "Config", alice).refused(QuotaCalls.configRequest(alice, session)));
      }
    }
    a.tick(); // A reports its ten: the shared bucket is empty
    b.tick(); // B reports its ten, and reads the bucket back: ten in debt
    a.tick(); // A reads it back too
    // Either replica now refuses alice until the debt is paid back (at one a second: ten seconds).
    for (QuotaStage replica : new QuotaStage[] {a, b}) {
      assertNotNull(
          open(replica, "Config", alice).refused(QuotaCalls.configRequest(alice, session)));
    }
    // An ExecutePlan start asks Redis itself: no lag.
    assertNull(start(b, alice));
    assertNotNull(start(b, principal("bob", null)), "bob has his own bucket");
  }

  @Test
  void startingAnExecutePlan_isOneRedisCommand() throws Exception {
    QuotasConfig config = quotas(limits(2, 100, 0, 0), limits(3, 100, 0, 0), LEASE);
    Redis redis = connect();
    QuotaStage a = QuotaStage.unscheduled(config, Optional.of(redis), Ticker.systemTicker());
    QuotaStage b = QuotaStage.unscheduled(config, Optional.of(connect()), Ticker.systemTicker());
    a.tick(); // loads the scripts
    b.tick();
    List<String> sent;
    int starts = 0;
    int admittedStarts = 0;
    try (Monitor monitor = Monitor.start(server.port())) {
      for (Principal who :
          new Principal[] {
            principal("alice", "acme"), principal("bob", "acme"), principal("carol", null)
          }) {
        for (int i = 0; i < 3; i++) {
          QuotaStage replica = i % 2 == 0 ? a : b;
          if (start(replica, who) != null) admittedStarts++; // held open: no release is sent
          starts++;
        }
      }
      sent = monitor.sentUntil(redis);
    }
    assertEquals(starts, sent.size(), "one command per ExecutePlan start: " + sent);
    assertTrue(sent.stream().allMatch(c -> c.equals("evalsha")), sent.toString());
    assertEquals(5, admittedStarts, "alice 2, bob 1 (acme holds 3), carol 2");
  }

  /**
   * Redis's MONITOR on a connection of its own: the commands clients send, apart from those scripts run
   * inside Redis (which INFO commandstats counts alike).
   */
  private static final class Monitor implements AutoCloseable {
    private static final String END = "quota-it-end-of-commands";
    private final Socket socket;
    private final BufferedReader in;

    private Monitor(Socket socket) throws IOException {
      this.socket = socket;
      this.in =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
    }

    static Monitor start(int port) throws IOException {
      Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
      s.setSoTimeout(30_000);
      Monitor m = new Monitor(s);
      s.getOutputStream().write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
      String ok = m.in.readLine();
      if (!"+OK".equals(ok)) throw new IOException("MONITOR answered " + ok);
      return m;
    }

    /** The names of the commands clients sent, until a marker sent now through {@code redis}. */
    List<String> sentUntil(Redis redis) throws IOException {
      redis.call(c -> c.echo(END));
      List<String> out = new ArrayList<>();
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.contains(END)) return out;
        int source = line.indexOf('[');
        int close = line.indexOf(']', source);
        if (line.substring(source, close).endsWith(" lua")) continue; // run by a script
        String rest = line.substring(close + 1).trim();
        out.add(rest.substring(1, rest.indexOf('"', 1)).toLowerCase(Locale.ROOT));
      }
      throw new IOException("MONITOR ended");
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
