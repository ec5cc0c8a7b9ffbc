package io.sparkgate.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.rpc.RetryInfo;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.protobuf.StatusProto;
import io.sparkgate.call.Principal;
import io.sparkgate.config.EnginesConfig;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.FakeTime;
import io.sparkgate.testing.Principals;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One pool's lifecycle with a launcher that starts a harmless process and serves the engine's port from this
 * JVM when the test says so: first calls held until it serves, max, warm engines, idle stops, and a crash at
 * start reported readably.
 */
final class EnginePoolTest {
  @TempDir Path dir;

  private final FakeTime time = new FakeTime();
  private final List<Process> processes = new ArrayList<>();
  private final Map<Integer, ServerSocket> serving = new ConcurrentHashMap<>();
  private final List<Launcher.Spec> launched = new ArrayList<>();
  private final List<Map<String, Object>> audit = new ArrayList<>();
  private final Map<String, String> tokens = new ConcurrentHashMap<>();

  /** Whether launched engines serve at once (their port opens as they start). */
  private volatile boolean serveAtOnce = true;

  /** The command a launched engine runs: a sleep, or one that exits at once (a crash at start). */
  private volatile List<String> command = List.of("sleep", "600");

  private final Launcher launcher =
      spec -> {
        synchronized (launched) {
          launched.add(spec);
        }
        Process p = new ProcessBuilder(command).start();
        processes.add(p);
        if (serveAtOnce) serve(spec.port());
        return p;
      };

  /** The lifecycle thread, as Engines runs it, only faster. */
  private final ScheduledExecutorService ticks = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void cleanUp() throws IOException {
    ticks.shutdownNow();
    processes.forEach(Process::destroyForcibly);
    for (ServerSocket s : serving.values()) s.close();
  }

  private void serve(int port) {
    try {
      serving.put(port, new ServerSocket(port, 50, InetAddress.getLoopbackAddress()));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private EnginePool pool(EnginesConfig.Share share, int warm, int max) {
    EnginesConfig config =
        new EnginesConfig(
            share,
            dir,
            "local[1]",
            "client",
            Map.of(),
            false,
            warm,
            max,
            Duration.ofSeconds(30),
            Duration.ofSeconds(30),
            "127.0.0.1",
            Optional.of(dir),
            EnginesConfig.PortRange.DEFAULT,
            1,
            Optional.empty());
    EngineSupport support =
        new EngineSupport(
            new MemoryDirectory(),
            "replica-a",
            "host-a",
            dir,
            tokens::put,
            tokens::remove,
            address -> {
              // No Spark here: the warm-up query fails as a server's SQL error would, not
              // UNAVAILABLE.
              throw new io.grpc.StatusRuntimeException(Status.INTERNAL);
            },
            record -> {
              synchronized (audit) {
                audit.add(record);
              }
            },
            time,
            Executors.newCachedThreadPool());
    EnginePool pool = new EnginePool("p", config, launcher, support);
    ticks.scheduleWithFixedDelay(pool::tick, 0, 20, TimeUnit.MILLISECONDS);
    return pool;
  }

  private static Principal user(String name, String... groups) {
    return Principals.principal(name, null, groups);
  }

  @Test
  void firstCall_isHeldUntilTheEngineServes_andTheNextUsesIt() throws Exception {
    serveAtOnce = false;
    EnginePool pool = pool(EnginesConfig.Share.USER, 0, 2);
    CompletableFuture<String> first =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return pool.backendFor(user("alice"));
              } catch (StatusException e) {
                throw new IllegalStateException(e);
              }
            });
    Await.until("the engine is launched", () -> launched.size() == 1);
    Thread.sleep(300);
    assertFalse(first.isDone(), "held while the engine does not serve");
    assertTrue(pool.mayBlock(user("alice")));
    serve(launched.get(0).port());
    String address = first.get(10, TimeUnit.SECONDS);
    assertEquals("127.0.0.1:" + launched.get(0).port(), address);
    assertEquals(launched.get(0).token(), tokens.get(address), "calls to it carry its token");
    assertFalse(pool.mayBlock(user("alice")));
    assertEquals(address, pool.backendFor(user("alice")));
    assertEquals(1, launched.size());
    assertTrue(pool.running(address));
  }

  @Test
  void max_refusesWithRetryInfo() throws Exception {
    EnginePool pool = pool(EnginesConfig.Share.USER, 0, 1);
    pool.backendFor(user("alice"));
    StatusException full = assertThrows(StatusException.class, () -> pool.backendFor(user("bob")));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, full.getStatus().getCode());
    assertTrue(full.getStatus().getDescription().contains("maximum of 1 Spark engines"));
    assertTrue(
        StatusProto.fromThrowable(full).getDetailsList().stream()
            .anyMatch(a -> a.is(RetryInfo.class)));
  }

  @Test
  void heldCalls_areBounded_andTheOneBeyondIsToldToRetry() throws Exception {
    serveAtOnce = false;
    EnginePool pool = pool(EnginesConfig.Share.USER, 0, 3); // max_held_calls: 1
    CompletableFuture<String> held =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return pool.backendFor(user("alice"));
              } catch (StatusException e) {
                throw new IllegalStateException(e);
              }
            });
    Await.until("alice's engine is launched", () -> launched.size() == 1);
    Thread.sleep(200);
    StatusException beyond =
        assertThrows(StatusException.class, () -> pool.backendFor(user("bob")));
    assertEquals(Status.Code.UNAVAILABLE, beyond.getStatus().getCode());
    assertTrue(
        beyond.getStatus().getDescription().contains("many calls already wait"),
        beyond.getStatus().getDescription());
    assertTrue(
        StatusProto.fromThrowable(beyond).getDetailsList().stream()
            .anyMatch(a -> a.is(RetryInfo.class)));
    serve(launched.get(0).port());
    assertEquals("127.0.0.1:" + launched.get(0).port(), held.get(10, TimeUnit.SECONDS));
  }

  @Test
  void warmEngine_isHandedToTheNextNewKey_andReplaced() throws Exception {
    EnginePool pool = pool(EnginesConfig.Share.USER, 1, 3);
    Await.until("a warm engine serves", () -> pool.states().get("warm") == 1);
    assertEquals(1, launched.size());
    time.advance(Duration.ofSeconds(3)); // the directory is scanned again while it waits
    Thread.sleep(300);
    String address = pool.backendFor(user("alice"));
    assertEquals("127.0.0.1:" + launched.get(0).port(), address, "the warm engine, no launch");
    assertEquals(launched.get(0).token(), tokens.get(address), "calls to it still carry its token");
    Await.until("the warm engines are topped up again", () -> launched.size() == 2);
    assertTrue(
        audit.stream().anyMatch(r -> "engine-assign".equals(r.get("action"))), audit.toString());
  }

  @Test
  void idleEngine_isStopped_andItsProcessEnds() throws Exception {
    EnginePool pool = pool(EnginesConfig.Share.GROUP, 0, 2);
    String address = pool.backendFor(user("alice", "analysts"));
    assertEquals(address, pool.backendFor(user("bob", "analysts")), "one engine per group");
    pool.used(address, null, null); // a call in flight: a long query's result stream
    time.advance(Duration.ofSeconds(31));
    Thread.sleep(200);
    assertTrue(pool.running(address), "in use while a call runs, however long");
    pool.finished(address);
    time.advance(Duration.ofSeconds(31));
    Await.until("the idle engine is stopped", () -> !pool.running(address));
    Await.until("the engine's process ended", () -> !processes.get(0).isAlive());
    Await.until(
        "its stop is audited",
        () -> {
          synchronized (audit) {
            return audit.stream()
                .anyMatch(
                    r ->
                        "engine-stop".equals(r.get("action"))
                            && String.valueOf(r.get("reason")).startsWith("idle for 31 s"));
          }
        });
  }

  @Test
  void crashAtStart_givesTheHeldCallOneReadableSentence_andTheOperatorTheReason() throws Exception {
    serveAtOnce = false;
    command = List.of("sh", "-c", "echo 'no such master' >&2; exit 3");
    EnginePool pool = pool(EnginesConfig.Share.USER, 0, 2);
    CompletableFuture<StatusException> refused =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                pool.backendFor(user("alice"));
                return null;
              } catch (StatusException e) {
                return e;
              }
            });
    Await.until("the engine is launched", () -> launched.size() == 1);
    StatusException e = refused.get(10, TimeUnit.SECONDS);
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
    assertTrue(
        e.getStatus().getDescription().contains("Your Spark engine could not be started"),
        e.getStatus().getDescription());
    assertEquals(1, pool.failures());
    assertTrue(
        audit.stream()
            .anyMatch(
                r ->
                    "engine-failed".equals(r.get("action"))
                        && String.valueOf(r.get("reason")).contains("exited while starting")),
        audit.toString());
  }

  @Test
  void tenantShare_oneEnginePerTenant_andNoTenantIsRefused() throws Exception {
    EnginePool pool = pool(EnginesConfig.Share.TENANT, 0, 3);
    String acme = pool.backendFor(Principals.principal("alice", "acme"));
    assertEquals(acme, pool.backendFor(Principals.principal("bob", "acme", "analysts")));
    String globex = pool.backendFor(Principals.principal("carol", "globex"));
    assertFalse(acme.equals(globex), "another tenant, another engine");
    StatusException e = assertThrows(StatusException.class, () -> pool.backendFor(user("dan")));
    assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode());
    assertTrue(e.getStatus().getDescription().contains("one Spark engine per tenant"));
  }

  @Test
  void groupShare_withoutAGroup_isRefusedByName() {
    EnginePool pool = pool(EnginesConfig.Share.GROUP, 0, 2);
    StatusException e = assertThrows(StatusException.class, () -> pool.backendFor(user("nobody")));
    assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode());
    assertTrue(e.getStatus().getDescription().contains("'nobody' has none"));
  }
}
