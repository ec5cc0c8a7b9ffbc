package io.sparkgate.route;

import com.github.benmanes.caffeine.cache.Ticker;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.call.Route;
import io.sparkgate.call.SparkError;
import io.sparkgate.call.Stage;
import io.sparkgate.config.PoolConfig;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.config.SessionsConfig;
import io.sparkgate.forward.CallHook;
import io.sparkgate.inspect.RequestHead;
import io.sparkgate.redis.Redis;
import io.sparkgate.redis.RedisUnavailableException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routing: which pool serves a principal, and which backend of it holds each session. Two stages: {@link
 * #routeStage()} chooses at the call's first message, before it is inspected (the pool's policy decides
 * it), and {@link #placeStage()} records a new session's placement once the request has passed every check,
 * so a refused request never places anything.
 *
 * <p>A session is never moved: while the backend holding it is down its requests are refused, retryably at
 * first and then for good ({@code health.session_lost_after}), because another backend does not have it.
 */
public final class Router implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Router.class);
  private static final Duration RETRY_SOON = Duration.ofSeconds(1);

  /** The routes and pools in force; replaced whole by {@link #reload}. */
  private record Table(Routes routes, Map<String, List<String>> pools) {}

  private volatile Table table;
  private final SessionRegistry registry;
  private final BackendHealth health;
  private final Duration sessionLostAfter;
  private final ScheduledExecutorService scheduler;
  private final Redis redis; // null with the memory store
  private final OnDemandBackends onDemand;

  /**
   * Each pool's backends found through DNS, as its last good answers name them (see discovery.DnsDiscovery);
   * replaced whole on each change.
   */
  private final Map<String, List<String>> discovered =
      new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * Backends found through DNS that have left their answer, with when (System.nanoTime): their sessions are
   * refused as a down backend's are, until they come back or the entry is pruned.
   */
  private final Map<String, Long> vanished = new java.util.concurrent.ConcurrentHashMap<>();

  /** Why a pool found through DNS has no backend yet (its last lookup), by pool. */
  private final Map<String, java.util.function.Supplier<String>> discoveryStatus =
      new java.util.concurrent.ConcurrentHashMap<>();

  /** How long a vanished backend is remembered: its placements are forgotten by then. */
  private final Duration vanishedKept;

  /** The engines health watches, by address, with their pool: forgotten once they no longer run. */
  private final Map<String, String> engines = new java.util.concurrent.ConcurrentHashMap<>();

  private final LongAdder placements = new LongAdder();
  private final LongAdder registryUnavailable = new LongAdder();

  private Router(
      Table table,
      SessionRegistry registry,
      BackendHealth health,
      Duration sessionLostAfter,
      ScheduledExecutorService scheduler,
      Redis redis,
      OnDemandBackends onDemand,
      Duration vanishedKept) {
    this.vanishedKept = vanishedKept;
    this.table = table;
    this.registry = registry;
    this.health = health;
    this.sessionLostAfter = sessionLostAfter;
    this.scheduler = scheduler;
    this.redis = redis;
    this.onDemand = onDemand;
  }

  /**
   * Starts routing as {@code config} says, probing backends over {@code channels}; {@code reconnect} asks
   * every connection to a backend to reconnect now.
   *
   * @param redis the shared connection with {@code sessions.store: redis}; null with memory
   */
  public static Router start(
      ProxyConfig config,
      Function<String, Channel> channels,
      Consumer<String> reconnect,
      Redis redis) {
    return start(config, channels, reconnect, redis, OnDemandBackends.NONE);
  }

  /** As above, with pools whose backends {@code onDemand} starts (engines). */
  public static Router start(
      ProxyConfig config,
      Function<String, Channel> channels,
      Consumer<String> reconnect,
      Redis redis,
      OnDemandBackends onDemand) {
    Table table = table(config);
    SessionsConfig sessions = config.sessions();
    SessionStore store =
        redis == null
            ? new MemorySessionStore(sessions.idleTimeout(), Ticker.systemTicker())
            : new RedisSessionStore(redis, sessions.idleTimeout());
    SessionRegistry registry =
        new SessionRegistry(store, redis != null, sessions.idleTimeout(), Ticker.systemTicker());
    BackendHealth health =
        new BackendHealth(
            allBackends(table), channels, reconnect, config.health(), System::nanoTime);
    ScheduledExecutorService scheduler =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "sparkgate-health");
              t.setDaemon(true);
              return t;
            });
    health.start(scheduler);
    Router router =
        new Router(
            table,
            registry,
            health,
            config.health().sessionLostAfter(),
            scheduler,
            redis,
            onDemand,
            max(sessions.idleTimeout(), config.health().sessionLostAfter()));
    long every = config.health().interval().toMillis();
    scheduler.scheduleWithFixedDelay(
        router::forgetStoppedEngines, every, every, TimeUnit.MILLISECONDS);
    return router;
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  /** Stops probing engines that no longer run: engines come and go, and health must not grow with them. */
  private void forgetStoppedEngines() {
    long now = System.nanoTime();
    vanished.forEach(
        (address, since) -> {
          if (now - since > vanishedKept.toNanos()) vanished.remove(address, since);
        });
    engines.forEach(
        (address, pool) -> {
          if (!onDemand.running(pool, address) && engines.remove(address, pool)) {
            health.forget(address);
          }
        });
  }

  private static Table table(ProxyConfig config) {
    Map<String, List<String>> pools = new LinkedHashMap<>();
    for (PoolConfig pool : config.pools().values()) {
      pools.put(pool.name(), pool.backends().stream().map(b -> b.address()).toList());
    }
    return new Table(new Routes(config.routes()), Map.copyOf(pools));
  }

  private static List<String> allBackends(Table table) {
    List<String> all = new ArrayList<>();
    table.pools.values().forEach(all::addAll);
    return all;
  }

  /**
   * Takes new routes and pool members from a reloaded configuration. Placed sessions stay where they are,
   * even on a backend no pool lists any more; only new sessions see the new pools.
   */
  public void reload(ProxyConfig config) {
    Table next = table(config);
    table = next;
    health.backends(allBackends(next));
    log.info("routes and pools reloaded: {}", next.pools);
  }

  /**
   * Checks the configuration file every {@code interval} and takes its routes and pool members when it
   * changes. What a reload cannot change safely (pools added or removed, a backend token, any other section)
   * is left as it is, with a warning that it needs a restart; a file that does not load keeps the routes in
   * force.
   */
  public void watch(ProxyConfig running, Duration interval) {
    Path file = running.source();
    long[] seen = {modified(file)};
    scheduler.scheduleWithFixedDelay(
        () -> {
          long now = modified(file);
          if (now == seen[0]) return;
          seen[0] = now;
          try {
            ProxyConfig next = ProxyConfig.load(file);
            String why = unsafeChange(running, next);
            if (why != null) {
              log.warn("{} changed, but {}: restart Sparkgate to apply it", file, why);
              return;
            }
            reload(next);
          } catch (RuntimeException e) {
            log.error(
                "{} changed but does not load; the routes in force stay: {}", file, e.getMessage());
          }
        },
        interval.toMillis(),
        interval.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  private static long modified(Path file) {
    try {
      return Files.getLastModifiedTime(file).toMillis() ^ Files.size(file);
    } catch (IOException e) {
      return -1;
    }
  }

  /** Why {@code next} cannot be put in force without a restart, or null. */
  static String unsafeChange(ProxyConfig running, ProxyConfig next) {
    if (!running.pools().keySet().equals(next.pools().keySet())) {
      return "pools were added or removed (each pool has its own policy stage)";
    }
    for (PoolConfig pool : next.pools().values()) {
      if (!running.policyOf(pool.name()).equals(next.policyOf(pool.name()))) {
        return "pool " + pool.name() + "'s policy file changed";
      }
      var dnsBefore = running.pool(pool.name()).dns();
      boolean sameDns = dnsBefore.size() == pool.dns().size();
      for (int i = 0; sameDns && i < dnsBefore.size(); i++) {
        sameDns = dnsBefore.get(i).sameSource(pool.dns().get(i));
      }
      if (!sameDns) {
        return "pool " + pool.name() + "'s dns backends changed";
      }
      for (var b : pool.backends()) {
        if (b.token().isPresent()
            && running.pools().values().stream()
                .noneMatch(p -> p.backend(b.address()).isPresent())) {
          return "the new backend " + b.address() + " has a token";
        }
        // Channels and their TLS are built at start: a backend reloaded into tls, or out of it, or
        // with
        // other files, would otherwise keep being reached as it was (a new one with tls, in
        // plaintext).
        var before =
            running.pools().values().stream()
                .flatMap(p -> p.backend(b.address()).stream())
                .findFirst();
        if (before.isPresent() ? !before.get().tls().equals(b.tls()) : b.tls().isPresent()) {
          return before.isPresent()
              ? "backend " + b.address() + "'s tls changed"
              : "the new backend " + b.address() + " has tls";
        }
      }
    }
    return null;
  }

  /** The backends of {@code pool} now: those listed, then those DNS names (sorted). */
  public List<String> members(String pool) {
    List<String> listed = table.pools.getOrDefault(pool, List.of());
    List<String> found = discovered.get(pool);
    if (found == null || found.isEmpty()) return listed;
    List<String> all = new ArrayList<>(listed);
    all.addAll(found);
    return all;
  }

  /**
   * DNS now names {@code addresses} as {@code pool}'s backends: those new to it join (health probes them, new
   * sessions may be placed there), those no longer named leave (no new sessions; their sessions are refused as
   * a down backend's, retryably for {@code health.session_lost_after}, then lost). An address already in
   * another pool is left out, with a warning: a server holds its sessions for one pool only.
   *
   * @return the addresses that left the pool
   */
  public synchronized java.util.Set<String> discovered(
      String pool, java.util.Set<String> addresses) {
    List<String> before = discovered.getOrDefault(pool, List.of());
    List<String> now = new ArrayList<>();
    for (String a : new java.util.TreeSet<>(addresses)) {
      String other = poolOf(a, pool);
      if (other != null) {
        log.warn(
            "DNS names {} as a backend of pool {}, but it is a backend of pool {}: left out",
            a,
            pool,
            other);
        continue;
      }
      now.add(a);
    }
    java.util.Set<String> left = new java.util.TreeSet<>(before);
    now.forEach(left::remove);
    discovered.put(pool, List.copyOf(now));
    long at = System.nanoTime();
    for (String a : now) {
      vanished.remove(a);
      if (!before.contains(a)) {
        health.watch(a);
        health.probeSoon(a);
        log.info("backend {} joins pool {} (found through DNS)", a, pool);
      }
    }
    for (String a : left) {
      vanished.put(a, at);
      health.forget(a);
      log.warn(
          "backend {} leaves pool {}: DNS no longer names it; its sessions are refused as a down"
              + " backend's",
          a,
          pool);
    }
    return left;
  }

  /** The pool other than {@code except} that has {@code address}, listed or found; null if none. */
  private String poolOf(String address, String except) {
    for (var e : table.pools.entrySet()) {
      if (e.getValue().contains(address)) return e.getKey();
    }
    for (var e : discovered.entrySet()) {
      if (!e.getKey().equals(except) && e.getValue().contains(address)) return e.getKey();
    }
    return null;
  }

  /** What readiness says of {@code pool} while it has no backend (a pool found through DNS: its lookup). */
  public void explainEmpty(String pool, java.util.function.Supplier<String> why) {
    discoveryStatus.put(pool, why);
  }

  /** The stage that chooses each call's pool and backend, placed before inspection. */
  public Stage routeStage() {
    return call -> {
      Principal principal = call.principal();
      Optional<String> pool =
          principal == null ? Optional.empty() : table.routes.pool(principal, call.authority());
      if (pool.isEmpty()) {
        throw new SparkError(
                Status.Code.PERMISSION_DENIED,
                "SPARKGATE_NO_ROUTE",
                "No Sparkgate route admits "
                    + (principal == null ? "this client" : "'" + principal.name() + "'")
                    + ": ask the Sparkgate operator to route you to a Spark server.",
                "42501",
                Map.of(),
                Optional.empty())
            .toException();
      }
      call.pool(pool.get());
      return new Routing(call);
    };
  }

  /** The stage that records new sessions' placements, placed after every check of the request. */
  public Stage placeStage() {
    return call -> new Placing(call);
  }

  /** Every backend's health, by address. */
  public Map<String, BackendHealth.State> backendStates() {
    return health.states();
  }

  /** Each pool's backends and their health ({@code up}, {@code down}, {@code unknown}), in configured order. */
  public Map<String, Map<String, String>> backendsByPool() {
    Map<String, BackendHealth.State> states = health.states();
    Map<String, Map<String, String>> out = new LinkedHashMap<>();
    table.pools.forEach(
        (pool, listed) -> {
          Map<String, String> each = new LinkedHashMap<>();
          for (String b : members(pool)) {
            BackendHealth.State state = states.getOrDefault(b, BackendHealth.State.UNKNOWN);
            each.put(b, state.name().toLowerCase(java.util.Locale.ROOT));
          }
          out.put(pool, each);
        });
    return out;
  }

  /** Forgets a session released other than by its client's call (an operator released it). */
  public void forget(String userId, String sessionId) {
    registry.forget(new SessionKey(userId, sessionId));
  }

  /**
   * The pools with no backend known to serve (probed up), or empty when every pool has one: a replica that
   * could place no new session in some pool should not get new clients.
   */
  public Optional<String> poolsWithoutBackend() {
    Map<String, BackendHealth.State> states = health.states();
    List<String> without = new ArrayList<>();
    table.pools.forEach(
        (pool, listed) -> {
          // A pool of engines starts one when it is needed: having none running now is no fault.
          if (onDemand.serves(pool)) return;
          List<String> members = members(pool);
          if (members.stream().noneMatch(b -> states.get(b) == BackendHealth.State.UP)) {
            var why = discoveryStatus.get(pool);
            without.add(pool + " (" + members + (why == null ? "" : "; " + why.get()) + ")");
          }
        });
    return without.isEmpty()
        ? Optional.empty()
        : Optional.of("no backend up in pool " + String.join(", ", without));
  }

  /** Sessions this replica has placements cached for. */
  public long cachedSessions() {
    return registry.cached();
  }

  /** Sessions placed by this replica since start. */
  public long placements() {
    return placements.sum();
  }

  /** Requests refused because the shared registry could not be asked. */
  public long registryUnavailable() {
    return registryUnavailable.sum();
  }

  /** Redis errors (0 with the memory store). */
  public long redisErrors() {
    return redis == null ? 0 : redis.errors();
  }

  /** Whether the session registry can answer (always with the memory store). */
  public boolean registryUp() {
    return redis == null || redis.up();
  }

  /** The configured pools and their backends. */
  public Map<String, List<String>> pools() {
    return table.pools;
  }

  @Override
  public void close() {
    scheduler.shutdownNow();
    health.close();
    registry.close();
  }

  /** The route stage's part of one call. */
  private final class Routing implements CallHook {
    private final Call call;
    private volatile boolean forwarded;

    Routing(Call call) {
      this.call = call;
    }

    /** The head names the session as the server will key it (the principal's name, once stamped). */
    @Override
    public boolean mayBlock(byte[] message) {
      if (call.route() != null) return false;
      RequestHead head = call.head();
      if (onDemand.serves(call.pool()) && onDemand.mayBlock(call.pool(), call.principal())) {
        return true;
      }
      return !head.sessionId().isEmpty() && registry.mayBlock(key(head));
    }

    @Override
    public byte[] onRequest(byte[] message) throws StatusException {
      if (call.route() == null) {
        Route route = choose(call.pool(), call.head(), call.principal());
        call.route(route);
        if (onDemand.serves(route.pool())) onDemand.used(route.pool(), route.backend(), null);
      }
      return message;
    }

    @Override
    public void onAccepted(byte[] forwarded) {
      this.forwarded = true;
    }

    @Override
    public String backend() {
      Route route = call.route();
      return route == null ? null : route.backend();
    }

    @Override
    public void onClose(Status status) {
      Route route = call.route();
      if (route != null && onDemand.serves(route.pool())) {
        onDemand.finished(route.pool(), route.backend());
      }
      if (route == null || !forwarded) return;
      if (status.getCode() == Status.Code.UNAVAILABLE) {
        // The backend could not be reached (gRPC's transport says UNAVAILABLE; Spark itself never
        // does).
        health.failed(route.backend(), "a call failed: " + BackendHealth.reason(status));
      } else if (status.isOk() && "ReleaseSession".equals(call.method())) {
        registry.forget(key(call.head()));
      }
    }
  }

  private static SessionKey key(RequestHead head) {
    return new SessionKey(head.userId(), head.sessionId());
  }

  /** Where a request of this session goes: its placement, or a new one in {@code pool}. */
  private Route choose(String pool, RequestHead ids, Principal principal) throws StatusException {
    Optional<Placement> placed;
    try {
      placed = ids.sessionId().isEmpty() ? Optional.empty() : registry.find(key(ids));
    } catch (RedisUnavailableException e) {
      registryUnavailable.increment();
      throw unavailable(
          "SPARKGATE_SESSION_REGISTRY_UNAVAILABLE",
          "Sparkgate cannot look up where this session lives right now; retry shortly.");
    }
    if (placed.isPresent()) {
      Placement p = placed.get();
      Long gone = vanished.get(p.backend());
      if (gone == null
          && discoveryStatus.containsKey(p.pool())
          && poolOf(p.backend(), "") == null) {
        // Placed by another replica (or before a restart) on a backend this one has not found in
        // DNS:
        // never reached without its pool's settings; refused as a vanished one until DNS names it.
        vanished.putIfAbsent(p.backend(), System.nanoTime());
        gone = vanished.get(p.backend());
      }
      if (gone != null) {
        throw sessionBackendGone(p, Duration.ofNanos(System.nanoTime() - gone));
      }
      if (onDemand.serves(p.pool()) && !onDemand.running(p.pool(), p.backend())) {
        throw sessionLost(p, "The Spark engine holding this session has stopped");
      }
      if (!health.usable(p.backend())) {
        throw sessionBackendDown(p);
      }
      return new Route(p.pool(), p.backend(), false);
    }
    if (onDemand.serves(pool)) {
      String engine = onDemand.backendFor(pool, principal);
      if (engines.putIfAbsent(engine, pool) == null) health.watch(engine);
      return new Route(pool, engine, !ids.sessionId().isEmpty());
    }
    List<String> members = members(pool);
    List<String> usable = members.stream().filter(health::usable).toList();
    String backend = Rendezvous.pick(usable, ids.userId(), ids.sessionId());
    if (backend == null) {
      throw unavailable(
          "SPARKGATE_NO_BACKEND",
          "No Spark server of your pool is available right now; retry shortly.");
    }
    return new Route(pool, backend, !ids.sessionId().isEmpty());
  }

  private StatusException sessionBackendDown(Placement p) {
    Duration down = health.downFor(p.backend());
    if (down.compareTo(sessionLostAfter) < 0) {
      return unavailable(
          "SPARKGATE_BACKEND_UNAVAILABLE",
          "The Spark server holding this session is unavailable; retry shortly.");
    }
    return sessionLost(
        p,
        "The Spark server holding this session has been unavailable for "
            + (down.toMinutes() > 0 ? down.toMinutes() + " min" : down.toSeconds() + " s"));
  }

  /** A session on a backend DNS no longer names: as a down backend's, timed from when it left. */
  private StatusException sessionBackendGone(Placement p, Duration gone) {
    if (gone.compareTo(sessionLostAfter) < 0) {
      return unavailable(
          "SPARKGATE_BACKEND_UNAVAILABLE",
          "The Spark server holding this session is unavailable; retry shortly.");
    }
    return sessionLost(
        p,
        "The Spark server holding this session has left its pool "
            + (gone.toMinutes() > 0 ? gone.toMinutes() + " min" : gone.toSeconds() + " s")
            + " ago");
  }

  private static StatusException sessionLost(Placement p, String why) {
    return new SparkError(
            Status.Code.FAILED_PRECONDITION,
            "SPARKGATE_SESSION_LOST",
            why + ": the session is lost. Start a new session (a new SparkSession).",
            "08003",
            Map.of("pool", p.pool()),
            Optional.empty())
        .toException();
  }

  private static StatusException unavailable(String errorClass, String message) {
    return new SparkError(
            Status.Code.UNAVAILABLE,
            errorClass,
            message,
            "08001",
            Map.of(),
            Optional.of(RETRY_SOON))
        .toException();
  }

  /** The place stage's part of one call: records a new session, and a clone beside its source. */
  private final class Placing implements CallHook {
    private final Call call;
    private boolean done; // request thread only

    Placing(Call call) {
      this.call = call;
    }

    @Override
    public byte[] onRequest(byte[] message) throws StatusException {
      if (done) return message;
      done = true;
      Route route = call.route();
      RequestHead head = call.head();
      if (route == null) return message;
      try {
        if (route.newSession()) {
          Placement mine = new Placement(route.pool(), route.backend());
          Placement winner = registry.place(key(head), mine);
          placements.increment();
          if (onDemand.serves(winner.pool())) {
            onDemand.used(winner.pool(), winner.backend(), key(head));
          }
          if (!winner.equals(mine)) {
            // Another replica placed it a moment before: go where it did.
            call.route(new Route(winner.pool(), winner.backend(), false));
          }
        }
        if ("CloneSession".equals(call.method()) && !head.newSessionId().isEmpty()) {
          Route source = call.route();
          registry.place(
              new SessionKey(head.userId(), head.newSessionId()),
              new Placement(source.pool(), source.backend()));
          placements.increment();
        }
      } catch (RedisUnavailableException e) {
        registryUnavailable.increment();
        throw unavailable(
            "SPARKGATE_SESSION_REGISTRY_UNAVAILABLE",
            "Sparkgate cannot record where this session lives right now; retry shortly.");
      }
      return message;
    }
  }
}
