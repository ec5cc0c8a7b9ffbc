package io.sparkgate.engine;

import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.Principal;
import io.sparkgate.call.SparkError;
import io.sparkgate.config.EnginesConfig;
import io.sparkgate.redis.RedisUnavailableException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pool's engines as this replica sees them: those it owns (started or adopted, and its warm ones) and
 * those other replicas own, which it only routes to. {@link #backendFor} finds or starts a principal's
 * engine and holds the call until it serves; {@link #tick} runs the lifecycle (ready, failed, idle, warm,
 * owners gone) every half second.
 */
final class EnginePool {
  private static final Logger log = LoggerFactory.getLogger(EnginePool.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Duration RETRY_STARTING = Duration.ofSeconds(5);
  private static final Duration RETRY_FULL = Duration.ofSeconds(30);
  private static final long HEARTBEAT_MILLIS = 2_000;
  private static final long OWNER_GONE_MILLIS = 10_000;
  private static final long USED_EVERY_MILLIS = 2_000;

  private final String pool;
  private final EnginesConfig config;
  private final EngineSupport support;
  private final Launcher launcher;
  private final Semaphore held;

  private final Map<EngineKey, Engine> owned = new ConcurrentHashMap<>();
  private final Deque<Engine> warm = new ArrayDeque<>(); // guarded by startLock
  private final Object startLock = new Object();

  /** Addresses of engines known to run, this replica's and others': a session placed elsewhere is lost. */
  private final Set<String> running = ConcurrentHashMap.newKeySet();

  /** Other replicas' engines as the last scan read them, by key id; and when each was last said used. */
  private final Map<String, EngineRecord> remote = new ConcurrentHashMap<>();

  private final Map<String, Long> remoteUsedSent = new ConcurrentHashMap<>();

  /** Calls routed through this replica and not ended yet, by engine address. */
  private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();

  private final Set<Integer> portsUsed = ConcurrentHashMap.newKeySet();
  private final LongAdder starts = new LongAdder();
  private final LongAdder failures = new LongAdder();
  private final LongAdder startNanos = new LongAdder();
  private final LongAdder ready = new LongAdder();
  private long lastHeartbeat;

  EnginePool(String pool, EnginesConfig config, Launcher launcher, EngineSupport support) {
    this.pool = pool;
    this.config = config;
    this.launcher = launcher;
    this.support = support;
    this.held = new Semaphore(config.maxHeldCalls());
  }

  String name() {
    return pool;
  }

  EnginesConfig config() {
    return config;
  }

  /** The key of {@code principal}'s engine, or why it has none in this pool. */
  EngineKey keyOf(Principal principal) throws StatusException {
    return switch (config.share()) {
      case USER -> new EngineKey(EnginesConfig.Share.USER, principal.name());
      case GROUP -> {
        if (principal.groups().isEmpty()) {
          throw refused(
              Status.Code.PERMISSION_DENIED,
              "SPARKGATE_ENGINE_NO_KEY",
              "Pool "
                  + pool
                  + " runs one Spark engine per group, and '"
                  + principal.name()
                  + "' has none: ask the Sparkgate operator.",
              Optional.empty());
        }
        yield new EngineKey(EnginesConfig.Share.GROUP, principal.groups().get(0));
      }
      case TENANT -> {
        if (principal.tenant().isEmpty()) {
          throw refused(
              Status.Code.PERMISSION_DENIED,
              "SPARKGATE_ENGINE_NO_KEY",
              "Pool "
                  + pool
                  + " runs one Spark engine per tenant, and '"
                  + principal.name()
                  + "' has none: ask the Sparkgate operator.",
              Optional.empty());
        }
        yield new EngineKey(EnginesConfig.Share.TENANT, principal.tenant().get());
      }
    };
  }

  /** Whether a call of {@code principal} may wait for an engine (theirs does not serve here yet). */
  boolean mayBlock(Principal principal) {
    try {
      EngineKey key = keyOf(principal);
      Engine e = owned.get(key);
      if (e != null) return e.state != Engine.State.READY;
      EngineRecord theirs = remote.get(key.id());
      return theirs == null || !theirs.ready();
    } catch (StatusException e) {
      return false;
    }
  }

  /** The address of {@code principal}'s engine, started and waited for if need be. */
  String backendFor(Principal principal) throws StatusException {
    EngineKey key = keyOf(principal);
    try {
      for (int attempt = 0; attempt < 3; attempt++) {
        Engine mine = owned.get(key);
        if (mine != null) return await(mine);
        Optional<EngineRecord> theirs = support.directory().find(pool, key);
        if (theirs.isPresent()) {
          EngineRecord r = theirs.get();
          if (!r.owner().equals(support.replica())) return awaitRemote(key, r);
          // Ours, but this replica does not hold it: it restarted. The tick adopts it; do it now.
          adopt(key, r);
          continue;
        }
        Engine started = start(key, principal);
        if (started != null) return await(started);
      }
    } catch (RedisUnavailableException e) {
      throw refused(
          Status.Code.UNAVAILABLE,
          "SPARKGATE_ENGINE_DIRECTORY_UNAVAILABLE",
          "Sparkgate cannot look up your Spark engine right now; retry shortly.",
          Optional.of(Duration.ofSeconds(1)));
    }
    throw starting(key);
  }

  /**
   * Claims {@code key} and starts (or hands it a warm) engine; null when another replica, or another call
   * here, claimed it first.
   */
  private Engine start(EngineKey key, Principal principal) throws StatusException {
    Engine e;
    synchronized (startLock) {
      if (owned.containsKey(key)) return owned.get(key);
      int total = support.directory().all(pool).size() + warm.size();
      e = warm.poll();
      if (e == null && total >= config.max()) {
        throw refused(
            Status.Code.RESOURCE_EXHAUSTED,
            "SPARKGATE_ENGINES_EXHAUSTED",
            "Pool "
                + pool
                + " already runs its maximum of "
                + config.max()
                + " Spark engines; retry later, when an idle one has stopped.",
            Optional.of(RETRY_FULL));
      }
      boolean fromWarm = e != null;
      if (e == null) e = newEngine();
      e.key = key;
      EngineRecord record = record(e);
      if (!support.directory().claim(pool, key, record)) {
        e.key = null;
        if (fromWarm) warm.addFirst(e);
        return null;
      }
      e.record = record;
      owned.put(key, e);
      if (fromWarm) {
        support.event(
            "engine-assign", this, e, "first call of " + key + " took a warm engine", null);
        if (e.state == Engine.State.READY) writeReady(e);
        return e;
      }
    }
    launch(e, principal.name(), "first call of " + key);
    return e;
  }

  private Engine newEngine() {
    String id = UUID.randomUUID().toString().substring(0, 8);
    int port = freePort();
    Path logFile = support.logDir().resolve(pool + "-" + id + ".log");
    return new Engine(
        id, config.bindAddress(), port, token(), logFile, support.nowMillis(), System.nanoTime());
  }

  /** Starts {@code e}'s process; a launch that fails at once fails the engine with the reason. */
  private void launch(Engine e, String user, String reason) {
    starts.increment();
    String appName = "sparkgate-" + pool + "-" + (e.key == null ? "warm-" + e.id : e.key.id());
    support.event("engine-start", this, e, reason, null);
    try {
      Process p =
          launcher.launch(
              new Launcher.Spec(
                  appName,
                  config.bindAddress(),
                  e.port,
                  e.token,
                  config.proxyUser() ? user : null,
                  e.log));
      e.process = p.toHandle();
      support.register(e.address, e.token);
      if (e.record != null) {
        EngineRecord next = e.record.withState(EngineRecord.STARTING, e.pid());
        if (support.directory().replace(pool, e.key, e.record, next)) e.record = next;
      }
    } catch (IOException | RuntimeException ex) {
      fail(e, "could not be started: " + ex.getMessage());
    }
  }

  /** Waits for an engine of this replica to serve, holding the call at most until its start timeout. */
  private String await(Engine e) throws StatusException {
    if (e.state == Engine.State.READY) return e.address;
    if (e.state == Engine.State.STOPPING) throw starting(e.key);
    if (!held.tryAcquire()) {
      throw refused(
          Status.Code.UNAVAILABLE,
          "SPARKGATE_ENGINE_STARTING",
          "Your Spark engine is starting and many calls already wait for engines; retry in a few"
              + " seconds.",
          Optional.of(RETRY_STARTING));
    }
    try {
      long left =
          config.startTimeout().toNanos() - (System.nanoTime() - e.startedNanos) + 1_000_000_000L;
      e.ready.get(Math.max(left, 1), TimeUnit.NANOSECONDS);
      return e.address;
    } catch (TimeoutException ex) {
      throw starting(e.key);
    } catch (ExecutionException ex) {
      if (ex.getCause() instanceof StatusException s) throw s;
      throw starting(e.key);
    } catch (InterruptedException ex) {
      Thread.currentThread().interrupt();
      throw starting(e.key);
    } finally {
      held.release();
    }
  }

  /** Waits for another replica's engine to serve, reading its record until it says so. */
  private String awaitRemote(EngineKey key, EngineRecord r) throws StatusException {
    long deadline = System.nanoTime() + config.startTimeout().toNanos();
    if (!r.ready() && !held.tryAcquire()) throw starting(key);
    boolean holding = !r.ready();
    try {
      while (!r.ready()) {
        if (System.nanoTime() > deadline) throw starting(key);
        Thread.sleep(250);
        Optional<EngineRecord> now = support.directory().find(pool, key);
        if (now.isEmpty()) {
          throw refused(
              Status.Code.UNAVAILABLE,
              "SPARKGATE_ENGINE_FAILED",
              "Your Spark engine could not be started; retry shortly (the operator has the reason).",
              Optional.of(RETRY_STARTING));
        }
        r = now.get();
      }
    } catch (InterruptedException ex) {
      Thread.currentThread().interrupt();
      throw starting(key);
    } finally {
      if (holding) held.release();
    }
    support.register(r.address(), r.token());
    running.add(r.address());
    return r.address();
  }

  boolean running(String address) {
    return running.contains(address);
  }

  /** A call went to the engine at {@code address}; {@code userId}/{@code sessionId} non-null: a new session. */
  void used(String address, String userId, String sessionId) {
    if (sessionId == null) {
      inFlight.computeIfAbsent(address, a -> new AtomicInteger()).incrementAndGet();
    }
    touch(address, userId, sessionId);
  }

  /** A routed call to {@code address} has ended: the engine was in use until now. */
  void finished(String address) {
    AtomicInteger n = inFlight.get(address);
    if (n != null && n.decrementAndGet() <= 0) inFlight.remove(address, n);
    touch(address, null, null);
  }

  /** The engine at {@code address} is in use now; with {@code sessionId}, a session was placed on it. */
  private void touch(String address, String userId, String sessionId) {
    long now = support.nowMillis();
    for (Engine e : owned.values()) {
      if (e.address.equals(address)) {
        e.lastUsedMillis.set(now);
        if (sessionId != null) support.directory().session(pool, e.key, userId, sessionId);
        return;
      }
    }
    // Another replica's engine: tell its owner, at most every few seconds.
    for (Map.Entry<String, EngineRecord> r : remote.entrySet()) {
      if (r.getValue().address().equals(address)) {
        EngineKey key = EngineKey.parse(r.getKey());
        if (key == null) return;
        if (sessionId != null) support.directory().session(pool, key, userId, sessionId);
        Long sent = remoteUsedSent.get(r.getKey());
        if (sent == null || now - sent >= USED_EVERY_MILLIS) {
          remoteUsedSent.put(r.getKey(), now);
          support.directory().used(pool, key, now);
        }
        return;
      }
    }
  }

  /** The lifecycle, run every half second on the engines' thread. */
  void tick() {
    long now = support.nowMillis();
    // Calls still running here (a long query's result stream) keep their engines in use.
    for (String address : inFlight.keySet()) touch(address, null, null);
    for (Engine e : List.copyOf(owned.values())) check(e, now);
    synchronized (startLock) {
      for (Engine e : List.copyOf(warm)) {
        if (!e.alive()) {
          warm.remove(e);
          fail(e, "exited while warm" + tail(e));
        } else if (e.state == Engine.State.STARTING) {
          checkStarting(e);
        }
      }
    }
    topUpWarm();
    if (now - lastHeartbeat >= HEARTBEAT_MILLIS) {
      lastHeartbeat = now;
      support.directory().heartbeat(support.replica(), OWNER_GONE_MILLIS);
      scan();
    }
  }

  private void check(Engine e, long now) {
    if (e.state == Engine.State.STOPPING) return;
    if (!e.alive()) {
      if (e.state == Engine.State.STARTING) {
        fail(e, "exited while starting" + tail(e));
      } else {
        removed(e, "exited" + tail(e), null);
      }
      return;
    }
    if (e.state == Engine.State.STARTING) {
      checkStarting(e);
      return;
    }
    long used = Math.max(e.lastUsedMillis.get(), sharedUse(e));
    if (now - used >= config.idleTimeout().toMillis()) {
      stop(e, "idle for " + Duration.ofMillis(now - used).toSeconds() + " s", null);
    }
  }

  private long sharedUse(Engine e) {
    try {
      return e.key == null ? 0 : support.directory().lastUsed(pool, e.key);
    } catch (RedisUnavailableException ex) {
      return support.nowMillis(); // cannot tell: keep it
    }
  }

  private void checkStarting(Engine e) {
    if (e.warmingUp) return;
    if (System.nanoTime() - e.startedNanos > config.startTimeout().toNanos()) {
      kill(e);
      fail(e, "was not serving after " + config.startTimeout().toSeconds() + " s" + tail(e));
    } else if (answers(e)) {
      // Not ready yet: Spark's first query on a new server takes seconds (its session state, the
      // planner, code paths the JIT has not seen), and a warm engine must answer its first user as
      // fast as a server that has run queries. One throwaway query first, then ready.
      e.warmingUp = true;
      long left = config.startTimeout().toNanos() - (System.nanoTime() - e.startedNanos);
      support.background(
          () -> {
            try {
              support.warmUp(e.address, Math.max(TimeUnit.NANOSECONDS.toMillis(left), 1000));
            } catch (io.grpc.StatusRuntimeException ex) {
              if (ex.getStatus().getCode() == Status.Code.UNAVAILABLE) {
                // What answered on the port is not (yet) its Connect server: look again next tick.
                e.warmingUp = false;
                return;
              }
              log.warn("{}: its warm-up query failed ({}); serving it anyway", e, ex.getMessage());
            }
            synchronized (startLock) {
              if (e.state == Engine.State.STARTING) ready(e);
            }
          });
    }
  }

  /** The engine serves and has run its first query: held calls go on, other replicas may route to it. */
  private void ready(Engine e) {
    e.state = Engine.State.READY;
    long took = System.nanoTime() - e.startedNanos;
    startNanos.add(took);
    ready.increment();
    running.add(e.address);
    if (e.key != null) writeReady(e);
    support.event("engine-ready", this, e, null, Duration.ofNanos(took));
    e.ready.complete(null);
  }

  private void writeReady(Engine e) {
    EngineRecord next = e.record.withState(EngineRecord.READY, e.pid());
    try {
      if (support.directory().replace(pool, e.key, e.record, next)) e.record = next;
    } catch (RedisUnavailableException ex) {
      log.warn("engine {}: could not record it ready in Redis; other replicas wait", e);
    }
  }

  /** The engine listens: Spark opens its port only once the server is up. */
  private static boolean answers(Engine e) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(e.host, e.port), 200);
      return true;
    } catch (IOException ex) {
      return false;
    }
  }

  private void topUpWarm() {
    synchronized (startLock) {
      if (warm.size() >= config.warm()) return;
      int total;
      try {
        total = support.directory().all(pool).size() + warm.size();
      } catch (RedisUnavailableException e) {
        return;
      }
      if (total >= config.max()) return;
      Engine e = newEngine();
      warm.add(e);
      launch(e, null, "warm: " + config.warm() + " kept ready");
    }
  }

  /**
   * Reads every record of the pool: others' engines are routed to; engines whose owner is gone are adopted
   * (this replica restarted) or taken over, or dropped when they no longer serve.
   */
  private void scan() {
    Map<String, EngineRecord> all = support.directory().all(pool);
    Set<String> addresses = new HashSet<>();
    owned.values().forEach(e -> addresses.add(e.address));
    remote.clear();
    for (Map.Entry<String, EngineRecord> entry : all.entrySet()) {
      EngineRecord r = entry.getValue();
      EngineKey key = EngineKey.parse(entry.getKey());
      if (key == null) continue;
      boolean mine = r.owner().equals(support.replica());
      if (mine && owned.containsKey(key)) continue;
      // Ours from before a restart, or one whose owner is gone (its heartbeat expired), starting or
      // not.
      if (mine || !support.directory().alive(r.owner())) {
        adopt(key, r);
        continue;
      }
      remote.put(entry.getKey(), r);
      if (r.ready()) {
        addresses.add(r.address());
        support.register(r.address(), r.token());
      }
    }
    owned.values().forEach(e -> addresses.add(e.address)); // with those adopted just now
    synchronized (startLock) {
      warm.forEach(e -> addresses.add(e.address));
    }
    for (String gone : running) {
      // Another replica's engine that stopped: its token and channels go here too.
      if (!addresses.contains(gone) && running.remove(gone)) support.unregister(gone);
    }
    running.addAll(addresses);
  }

  /**
   * Takes over {@code r}'s engine: this replica's own from before a restart, or one whose owner is gone. An
   * engine that still serves is kept (its process found again when it runs on this host); one that does not
   * is dropped and stopped.
   */
  private void adopt(EngineKey key, EngineRecord r) {
    EngineRecord mine = r.ownedBy(support.replica());
    if (!r.owner().equals(support.replica()) && !support.directory().replace(pool, key, r, mine)) {
      return; // another replica took it first
    }
    if (r.owner().equals(support.replica()) && !mine.equals(r)) return;
    int colon = r.address().lastIndexOf(':');
    Engine e =
        new Engine(
            r.id(),
            r.address().substring(0, colon).replace("[", "").replace("]", ""),
            Integer.parseInt(r.address().substring(colon + 1)),
            r.token(),
            support.logDir().resolve(pool + "-" + r.id() + ".log"),
            r.startedMillis(),
            System.nanoTime());
    e.key = key;
    e.record = mine;
    e.process = sameHost(r) ? ProcessHandle.of(r.pid()).orElse(null) : null;
    if (!r.ready() || !answers(e) || (sameHost(r) && e.process == null)) {
      support.directory().replace(pool, key, mine, null);
      support.directory().forget(pool, key);
      e.process().ifPresent(EnginePool::terminate);
      support.event(
          "engine-stop",
          this,
          e,
          "owner " + r.owner() + " gone and the engine no longer serves",
          null);
      return;
    }
    e.state = Engine.State.READY;
    e.ready.complete(null);
    owned.put(key, e);
    running.add(e.address);
    portsUsed.add(e.port);
    support.register(e.address, e.token);
    support.event(
        "engine-adopt",
        this,
        e,
        r.owner().equals(support.replica())
            ? "found again after this replica restarted"
            : "owner " + r.owner() + " is gone",
        null);
  }

  private boolean sameHost(EngineRecord r) {
    return r.host().equals(support.host());
  }

  /** Stops {@code key}'s engine for an operator; whether this replica owned one. */
  boolean stop(EngineKey key, String operator) {
    Engine e = owned.get(key);
    if (e == null) return false;
    stop(e, "stopped by operator " + operator, operator);
    return true;
  }

  /** Stops an engine gracefully: its sessions released, then the process asked to end (killed after 20 s). */
  private void stop(Engine e, String reason, String operator) {
    e.state = Engine.State.STOPPING;
    owned.remove(e.key, e);
    running.remove(e.address);
    List<String[]> sessions = List.of();
    try {
      sessions = support.directory().sessions(pool, e.key);
      support.directory().replace(pool, e.key, e.record, null);
      support.directory().forget(pool, e.key);
    } catch (RedisUnavailableException ex) {
      log.warn("engine {}: Redis unavailable while stopping it; its record may linger", e);
    }
    List<String[]> release = sessions;
    support.background(
        () -> {
          int released = 0;
          for (String[] s : release) {
            try {
              support.release(e.address, s[0], s[1]);
              released++;
            } catch (RuntimeException ex) {
              // Already gone (its client released it): nothing to do.
            }
          }
          support.event(
              "engine-stop",
              this,
              e,
              reason + "; released " + released + " of " + release.size() + " sessions",
              null,
              operator);
          e.process().ifPresent(EnginePool::terminate);
          support.unregister(e.address);
        });
  }

  /** An engine stopped by itself: its record goes, and its sessions with it. */
  private void removed(Engine e, String reason, String operator) {
    owned.remove(e.key, e);
    running.remove(e.address);
    try {
      support.directory().replace(pool, e.key, e.record, null);
      support.directory().forget(pool, e.key);
    } catch (RedisUnavailableException ex) {
      log.warn("engine {}: Redis unavailable; its record may linger", e);
    }
    support.unregister(e.address);
    support.event("engine-stop", this, e, reason, null, operator);
  }

  /** A start failed: the held calls get one readable sentence, the operator the reason and the log tail. */
  private void fail(Engine e, String why) {
    failures.increment();
    e.state = Engine.State.STOPPING;
    e.process().ifPresent(EnginePool::terminate);
    if (e.key != null) {
      owned.remove(e.key, e);
      try {
        if (e.record != null) support.directory().replace(pool, e.key, e.record, null);
      } catch (RedisUnavailableException ex) {
        log.warn("engine {}: Redis unavailable; its record may linger", e);
      }
    }
    support.unregister(e.address);
    log.error("{} of pool {} {}", e, pool, why);
    support.event("engine-failed", this, e, why, null);
    e.ready.completeExceptionally(
        refused(
            Status.Code.UNAVAILABLE,
            "SPARKGATE_ENGINE_FAILED",
            "Your Spark engine could not be started; retry shortly, and tell the Sparkgate operator if"
                + " it persists.",
            Optional.of(RETRY_STARTING)));
  }

  private static void kill(Engine e) {
    e.process()
        .ifPresent(
            p -> {
              p.descendants().forEach(ProcessHandle::destroyForcibly);
              p.destroyForcibly();
            });
  }

  /** Asks the process (and what it started) to end, and kills it after 20 s. */
  static void terminate(ProcessHandle p) {
    List<ProcessHandle> children = p.descendants().toList();
    p.destroy();
    try {
      p.onExit().get(20, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // killed below
    }
    if (p.isAlive()) p.destroyForcibly();
    children.forEach(ProcessHandle::destroyForcibly);
  }

  /** The last lines of the engine's log, for the operator. */
  private static String tail(Engine e) {
    return EngineLogs.tail(e.log, 15);
  }

  /** Stops every engine this replica owns (the proxy stops): none is left behind. */
  void close() {
    List<Engine> all = new ArrayList<>(owned.values());
    synchronized (startLock) {
      all.addAll(warm);
      warm.clear();
    }
    for (Engine e : all) {
      if (e.key != null) {
        try {
          support.directory().replace(pool, e.key, e.record, null);
          support.directory().forget(pool, e.key);
        } catch (RuntimeException ex) {
          log.warn("engine {}: could not remove its record: {}", e, ex.getMessage());
        }
      }
      if (e.key != null) owned.remove(e.key);
      e.ready.completeExceptionally(starting(e.key));
      support.event("engine-stop", this, e, "Sparkgate is stopping", null);
    }
    all.parallelStream().forEach(e -> e.process().ifPresent(EnginePool::terminate));
  }

  /** Engines of this pool, for the API and console: every replica's, this one's warm ones too. */
  List<Map<String, Object>> list() {
    List<Map<String, Object>> out = new ArrayList<>();
    long now = support.nowMillis();
    Map<String, EngineRecord> all;
    try {
      all = support.directory().all(pool);
    } catch (RedisUnavailableException e) {
      all = Map.of();
    }
    Set<String> seen = new HashSet<>();
    for (Engine e : owned.values()) {
      seen.add(e.key.id());
      out.add(
          row(
              e.key.id(),
              support.replica(),
              e.address,
              e.state.name().toLowerCase(java.util.Locale.ROOT),
              e.startedMillis,
              sessions(e.key),
              Math.max(e.lastUsedMillis.get(), sharedUse(e)),
              now));
    }
    for (Map.Entry<String, EngineRecord> r : all.entrySet()) {
      if (seen.contains(r.getKey())) continue;
      EngineKey key = EngineKey.parse(r.getKey());
      EngineRecord rec = r.getValue();
      out.add(
          row(
              r.getKey(),
              rec.owner(),
              rec.address(),
              rec.state(),
              rec.startedMillis(),
              key == null ? 0 : sessions(key),
              key == null ? 0 : support.directory().lastUsed(pool, key),
              now));
    }
    synchronized (startLock) {
      for (Engine e : warm) {
        out.add(
            row(
                "",
                support.replica(),
                e.address,
                e.state == Engine.State.READY ? "warm" : "starting",
                e.startedMillis,
                0,
                0,
                now));
      }
    }
    return out;
  }

  private int sessions(EngineKey key) {
    try {
      return support.directory().sessions(pool, key).size();
    } catch (RedisUnavailableException e) {
      return -1;
    }
  }

  private Map<String, Object> row(
      String key,
      String owner,
      String address,
      String state,
      long started,
      int sessions,
      long lastUse,
      long now) {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("pool", pool);
    row.put("key", key);
    row.put("owner", owner);
    row.put("address", address);
    row.put("state", state);
    row.put("started", java.time.Instant.ofEpochMilli(started).toString());
    row.put("age_seconds", Math.max(0, (now - started) / 1000));
    row.put("sessions", sessions);
    row.put("last_use", lastUse <= 0 ? null : java.time.Instant.ofEpochMilli(lastUse).toString());
    return row;
  }

  /** Engines this replica owns by state ({@code starting}, {@code ready}, {@code warm}). */
  Map<String, Integer> states() {
    Map<String, Integer> out = new LinkedHashMap<>();
    out.put("starting", 0);
    out.put("ready", 0);
    out.put("warm", 0);
    for (Engine e : owned.values()) {
      if (e.state == Engine.State.STARTING) out.merge("starting", 1, Integer::sum);
      if (e.state == Engine.State.READY) out.merge("ready", 1, Integer::sum);
    }
    synchronized (startLock) {
      for (Engine e : warm)
        out.merge(e.state == Engine.State.READY ? "warm" : "starting", 1, Integer::sum);
    }
    return out;
  }

  long starts() {
    return starts.sum();
  }

  long failures() {
    return failures.sum();
  }

  long readyCount() {
    return ready.sum();
  }

  double startSeconds() {
    return startNanos.sum() / 1e9;
  }

  private StatusException starting(EngineKey key) {
    return refused(
        Status.Code.UNAVAILABLE,
        "SPARKGATE_ENGINE_STARTING",
        "Your Spark engine"
            + (key == null ? "" : " (" + key + ")")
            + " is still starting; retry in a few seconds.",
        Optional.of(RETRY_STARTING));
  }

  private StatusException refused(
      Status.Code code, String errorClass, String message, Optional<Duration> retry) {
    return new SparkError(
            code,
            errorClass,
            message,
            code == Status.Code.PERMISSION_DENIED ? "42501" : "08001",
            Map.of("pool", pool),
            retry)
        .toException();
  }

  private EngineRecord record(Engine e) {
    return new EngineRecord(
        e.id,
        e.key.id(),
        e.address,
        e.token,
        support.replica(),
        support.host(),
        e.pid(),
        e.state == Engine.State.READY ? EngineRecord.READY : EngineRecord.STARTING,
        e.startedMillis);
  }

  /** A port free now, not one an engine of this replica had: a session placed on a stopped engine stays lost. */
  private int freePort() {
    EnginesConfig.PortRange range = config.ports();
    int start = RANDOM.nextInt(range.size());
    for (int i = 0; i < range.size(); i++) {
      int port = range.from() + (start + i) % range.size();
      if (portsUsed.contains(port)) continue;
      try (ServerSocket s =
          new ServerSocket(port, 1, java.net.InetAddress.getByName(config.bindAddress()))) {
        portsUsed.add(port);
        return port;
      } catch (IOException e) {
        // taken: the next one
      }
    }
    throw new IllegalStateException(
        "no free port left in " + range.from() + "-" + range.to() + " on " + config.bindAddress());
  }

  private static String token() {
    byte[] bytes = new byte[32];
    RANDOM.nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }
}
