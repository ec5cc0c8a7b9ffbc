package io.sparkgate;

import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import io.sparkgate.admin.AdminServer;
import io.sparkgate.admin.Readiness;
import io.sparkgate.audit.AuditLog;
import io.sparkgate.audit.AuditStage;
import io.sparkgate.auth.Authentication;
import io.sparkgate.call.InspectStage;
import io.sparkgate.call.Pipeline;
import io.sparkgate.call.PoolStages;
import io.sparkgate.call.Route;
import io.sparkgate.call.Stage;
import io.sparkgate.config.BackendConfig;
import io.sparkgate.config.EnginesConfig;
import io.sparkgate.config.PoolConfig;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.config.SecretPatterns;
import io.sparkgate.config.SessionsConfig;
import io.sparkgate.discovery.DnsDiscovery;
import io.sparkgate.engine.Engines;
import io.sparkgate.forward.Backends;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.ClientListener;
import io.sparkgate.forward.ProxyRegistry;
import io.sparkgate.head.HeadStage;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.InspectorConfig;
import io.sparkgate.inspect.RedisSessionStates;
import io.sparkgate.inspect.SessionTracker;
import io.sparkgate.lakehouse.IcebergTimeTravelPolicyRewriter;
import io.sparkgate.limits.CallLimiter;
import io.sparkgate.limits.ConnectionGate;
import io.sparkgate.live.LiveCalls;
import io.sparkgate.metrics.ProxyMetrics;
import io.sparkgate.policy.PolicyStage;
import io.sparkgate.quota.QuotaStage;
import io.sparkgate.redact.ConfigRedaction;
import io.sparkgate.redis.Redis;
import io.sparkgate.revoke.Revocations;
import io.sparkgate.route.OnDemandBackends;
import io.sparkgate.route.Router;
import io.sparkgate.tls.ServerTls;
import io.sparkgate.tracing.Tracing;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running proxy: the client-facing server (TLS, health service, the Spark Connect methods) joined to the
 * backends of its pools. Every call passes the stages in the order {@link #start} states once: its span
 * (with tracing), audit around them all, authenticate, read the head, route, inspect and decide by its pool's policy, quotas, place, then
 * forward ({@link Pipeline}). {@link #close} stops it gracefully.
 */
public final class Sparkgate implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Sparkgate.class);

  private final ProxyConfig config;
  private final Server server;
  private final HealthStatusManager health;
  private final ExecutorService callExecutor;
  private final Readiness readiness;
  private final ScheduledExecutorService readinessWatch;
  private final AdminServer admin; // null without an admin listener
  private final Parts parts;

  private Sparkgate(
      ProxyConfig config,
      Server server,
      HealthStatusManager health,
      ExecutorService callExecutor,
      Readiness readiness,
      ScheduledExecutorService readinessWatch,
      AdminServer admin,
      Parts parts) {
    this.config = config;
    this.server = server;
    this.health = health;
    this.callExecutor = callExecutor;
    this.readiness = readiness;
    this.readinessWatch = readinessWatch;
    this.admin = admin;
    this.parts = parts;
  }

  /** Starts a proxy for this configuration; the listening port is bound when this returns. */
  public static Sparkgate start(ProxyConfig config) throws IOException {
    return start(config, CallHook.Factory.PASS_THROUGH);
  }

  /** @param hooks a last stage for tests to watch or disturb calls with ({@code PASS_THROUGH}: none) */
  static Sparkgate start(ProxyConfig config, CallHook.Factory hooks) throws IOException {
    Parts parts = new Parts();
    try {
      AuditLog auditLog = parts.add(auditLog(config));
      Tracing tracing = parts.add(config.tracing().map(Tracing::start).orElse(null));
      Backends backends = parts.add(Backends.start(config));
      warnPlaintextBackends(config);
      Redis redis = parts.add(shared(config) ? Redis.connect(config.sessions()) : null);
      Engines engines =
          parts.add(
              Engines.any(config)
                  ? Engines.start(
                      config,
                      redis,
                      replicaName(config),
                      backends::register,
                      backends::unregister,
                      backends::channel,
                      auditLog == null ? null : auditLog::write)
                  : null);
      Router router =
          parts.add(
              Router.start(
                  config,
                  backends::channel,
                  backends::reconnect,
                  redis,
                  engines == null ? OnDemandBackends.NONE : engines));
      router.watch(config, config.policy().reloadInterval());
      DnsDiscovery dns = parts.add(DnsDiscovery.start(config, backends, router)); // null: no dns
      Map<String, PolicyStage> policies = policies(config, backends, dns, redis, parts);
      LiveCalls live =
          config.admin().enabled() ? new LiveCalls(Clock.systemUTC(), idle(config)) : null;
      Authentication auth = Authentication.create(config.auth());
      Revocations revocations =
          parts.add(
              config.auth().enabled()
                  ? Revocations.start(config.auth().revocations(), redis, Clock.systemUTC())
                  : null);
      // The stages of every call, in the order a call meets them (its responses, in reverse).
      List<Feature> features =
          List.of(
              Feature.of(tracing == null ? null : tracing.stage()), // its span covers every stage
              // around them all: every call is recorded, the refused ones too
              timed(tracing, "audit", audit(auditLog)),
              // the admin API's view, which sees every call end too
              timed(tracing, "live", Feature.of(live)),
              timed(tracing, "authenticate", new Feature(auth.stage(), m -> m.watch(auth))),
              revocations == null
                  ? Feature.NONE
                  : timed(
                      tracing,
                      "revoke",
                      new Feature(revocations.stage(), m -> m.watch(revocations))),
              timed(tracing, "head", Feature.of(new HeadStage(config.auth()))),
              timed(
                  tracing,
                  "redact",
                  Feature.of(
                      new ConfigRedaction(new SecretPatterns(config.auth().secretPatterns())))),
              timed(tracing, "route", new Feature(router.routeStage(), m -> m.watch(router))),
              // inspect and decide by the pool's policy
              timed(tracing, "inspect and decide", pools(config, policies)),
              // after decide: refused requests never count
              timed(tracing, "quota", quotas(config, redis, parts)),
              timed(tracing, "place", Feature.of(router.placeStage())),
              hooks == CallHook.Factory.PASS_THROUGH ? Feature.NONE : hooks(hooks));
      ExecutorService callExecutor =
          parts.add(callExecutor(heldCalls(config)), ExecutorService::shutdownNow);
      ProxyRegistry methods =
          new ProxyRegistry(
              backends, callExecutor, config.listen().forwardHeaders(), Feature.pipeline(features));
      ProxyMetrics metrics = parts.add(config.admin().enabled() ? ProxyMetrics.create() : null);
      if (metrics != null) features.forEach(f -> f.watch().accept(metrics));
      if (metrics != null && engines != null) metrics.watch(engines);
      if (metrics != null && dns != null) metrics.watch(dns);
      HealthStatusManager health = new HealthStatusManager();
      Server server =
          parts.add(
              serve(config, backends, auth, parts, metrics, methods, health), Server::shutdownNow);
      Readiness readiness = readiness(config, auditLog, router, redis);
      if (dns != null) readiness.note("dns", dns::detail);
      ScheduledExecutorService watch =
          parts.add(watchReadiness(readiness, health), ScheduledExecutorService::shutdownNow);
      AdminServer admin =
          parts.add(
              config.admin().enabled()
                  ? AdminListener.start(
                      config.admin(),
                      readiness,
                      metrics,
                      live,
                      router,
                      policies,
                      auditLog,
                      backends,
                      revocations,
                      engines,
                      config.auth().anonymousMode())
                  : null);
      return new Sparkgate(config, server, health, callExecutor, readiness, watch, admin, parts);
    } catch (IOException | RuntimeException e) {
      parts.close();
      throw e;
    }
  }

  /**
   * The stages of a proxy with one backend, no session registry and no quotas, in {@link #start}'s order: for
   * the benchmarks that relay calls themselves (bench/). Every call goes to the first backend.
   *
   * @param audit null without audit
   * @param policy null without a policy
   */
  public static List<Stage> stages(
      ProxyConfig config, Authentication auth, AuditStage audit, PolicyStage policy) {
    Route only =
        new Route(config.pools().keySet().iterator().next(), config.firstBackend().address());
    return Stream.of(
            audit,
            auth.stage(),
            new HeadStage(config.auth()),
            new ConfigRedaction(new SecretPatterns(config.auth().secretPatterns())),
            call -> {
              call.route(only);
              return CallHook.PASS_THROUGH;
            },
            policy == null ? null : InspectStage.full(inspector(config), policy.sessions()),
            policy == null ? null : policy.stage())
        .filter(Objects::nonNull)
        .toList();
  }

  /** The discard port on loopback: where the profiler of a pool of engines would ask, and fail. */
  private static final String NO_SERVER = "127.0.0.1:9";

  private static boolean shared(ProxyConfig config) {
    return config.sessions().store() == SessionsConfig.Store.REDIS;
  }

  private static Duration idle(ProxyConfig config) {
    return config.sessions().idleTimeout();
  }

  /**
   * A backend reached in plaintext at an address that may be another machine: allowed (a service mesh may
   * encrypt underneath), but the backend token and every query then cross the network as written.
   */
  private static void warnPlaintextBackends(ProxyConfig config) {
    for (PoolConfig pool : config.pools().values()) {
      for (BackendConfig backend : pool.backends()) {
        if (backend.plaintextBeyondLoopback()) {
          String fix =
              config.pools().size() == 1 && pool.name().equals(PoolConfig.DEFAULT)
                  ? "backend.tls"
                  : "tls on its entry in pools." + pool.name() + ".backends";
          log.warn(
              "backend {} is reached in plaintext beyond loopback: set {} (see docs/configuration.md)"
                  + " unless the network itself encrypts; its token and every query cross it as"
                  + " written",
              backend.address(),
              fix);
        }
      }
    }
  }

  /** The audit log; null (and a warning) without an audit section. */
  private static AuditLog auditLog(ProxyConfig config) throws IOException {
    if (config.audit().enabled()) return AuditLog.open(config.audit(), Clock.systemUTC());
    log.warn("no audit section in the configuration: calls are NOT audited");
    return null;
  }

  private static Feature audit(AuditLog auditLog) {
    if (auditLog == null) return Feature.NONE;
    AuditStage audit = new AuditStage(auditLog, Clock.systemUTC());
    return new Feature(audit, m -> m.watch(auditLog, audit));
  }

  /**
   * Each pool's policy stage, started (its profiler asks the backend as the proxy does, so with the backend's
   * token); empty, with a warning, without a policy section.
   */
  private static Map<String, PolicyStage> policies(
      ProxyConfig config, Backends backends, DnsDiscovery dns, Redis redis, Parts parts) {
    Map<String, PolicyStage> policies = new LinkedHashMap<>();
    if (!config.policyEnabled()) {
      log.warn(
          "no policy section in the configuration: requests are NOT checked against any policy");
      return policies;
    }
    for (PoolConfig pool : config.pools().values()) {
      policies.put(
          pool.name(),
          parts.add(
              PolicyStage.start(
                  config,
                  pool.name(),
                  // A pool of engines states its profile in its configuration (EnginesConfig): no
                  // running server is needed to read it, and the profiler's channel leads nowhere.
                  pool.engines().isEmpty() && pool.backends().isEmpty()
                      ? dns.anyBackend(pool.name()) // found through DNS: one of them, once found
                      : backends.channel(
                          pool.engines().isPresent()
                              ? NO_SERVER
                              : pool.backends().get(0).address()),
                  IcebergTimeTravelPolicyRewriter.all(),
                  redis == null
                      ? null
                      : new RedisSessionStates(redis, pool.name(), SessionTracker.IDLE))));
    }
    return policies;
  }

  /** Inspect and decide by the policy of the pool the route stage chose; nothing without policies. */
  private static Feature pools(ProxyConfig config, Map<String, PolicyStage> policies) {
    if (policies.isEmpty()) return Feature.NONE;
    Inspector inspector = inspector(config);
    Map<String, Pipeline> byPool = new LinkedHashMap<>();
    policies.forEach(
        (pool, policy) ->
            byPool.put(
                pool,
                Pipeline.of(InspectStage.full(inspector, policy.sessions()), policy.stage())));
    // A first message may wait when the pool's stages may (a shared store, or OPA's round trip).
    boolean mayWait = shared(config) || config.policy().opa().isPresent();
    return new Feature(new PoolStages(byPool::get, mayWait), m -> policies.forEach(m::watch));
  }

  /** The inspector a policy decides on, with the configuration's bounds. */
  private static Inspector inspector(ProxyConfig config) {
    return new Inspector(
        InspectorConfig.DEFAULTS.withMaxDecompressedBytes(
            config.policy().maxDecompressedPlanBytes()));
  }

  private static Feature quotas(ProxyConfig config, Redis redis, Parts parts) {
    if (!config.quotas().enabled()) return Feature.NONE;
    QuotaStage quotas = parts.add(QuotaStage.create(config.quotas(), Optional.ofNullable(redis)));
    return new Feature(quotas, m -> m.watch(quotas));
  }

  private static Feature hooks(CallHook.Factory hooks) {
    return Feature.of(
        call ->
            hooks.newCall(ProxyRegistry.method(call.method()), call.headers(), call.transport()));
  }

  /**
   * Calls run on the event loops (see EventLoops) except for request messages too large to inspect there (or
   * waiting on a shared store), which go to this fixed pool: a flood of them cannot grow the thread count.
   * First calls held until their engine serves each take a thread too, at most {@code held} of them, so the
   * pool has that many more: held calls can never starve the others.
   */
  private static ExecutorService callExecutor(int held) {
    return Executors.newFixedThreadPool(
        Math.max(4, 2 * Runtime.getRuntime().availableProcessors()) + held,
        daemons("sparkgate-call"));
  }

  /** First calls that may wait for an engine at once, across the engine pools. */
  private static int heldCalls(ProxyConfig config) {
    return config.pools().values().stream()
        .flatMap(p -> p.engines().stream())
        .mapToInt(EnginesConfig::maxHeldCalls)
        .sum();
  }

  /**
   * This replica's name in the engine directory: its host and listening port, which a restart keeps, so a
   * replica finds its engines again (an ephemeral port gets a name of its own each start).
   */
  private static String replicaName(ProxyConfig config) {
    String host;
    try {
      host = java.net.InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      host = "localhost";
    }
    int port = config.listen().port();
    return host + ":" + (port == 0 ? "0-" + java.util.UUID.randomUUID() : Integer.toString(port));
  }

  private static ServerTls serverTls(ProxyConfig config) {
    return config
        .tls()
        .map(
            t ->
                ServerTls.load(
                    t.certFile(), t.keyFile(), t.clientCaFile().orElse(null), t.reloadInterval()))
        .orElse(null);
  }

  /**
   * Starts the client-facing listener. Interceptors run before any stage, in this order: the metrics count
   * every call, the refused ones too; then over-large headers and calls beyond the limits are refused.
   */
  private static Server serve(
      ProxyConfig config,
      Backends backends,
      Authentication auth,
      Parts parts,
      ProxyMetrics metrics,
      ProxyRegistry methods,
      HealthStatusManager health)
      throws IOException {
    ConnectionGate gate = new ConnectionGate(config.limits());
    CallLimiter callLimiter = new CallLimiter(config.limits(), methods.buffered()::now);
    ServerTls tls = parts.add(serverTls(config));
    ClientListener listener =
        new ClientListener(config.listen(), config.limits(), backends.loops())
            .admit(gate.acceptor(), gate.transportHeaderLimit())
            .filter(gate.transportFilter())
            .filter(auth.transportFilter());
    if (metrics != null) {
      listener.intercept(metrics.interceptor());
      metrics.watch(backends.loops());
      metrics.watch(methods);
      metrics.watch(gate, callLimiter, methods.buffered());
      if (tls != null) metrics.watch(tls);
    }
    listener.intercept(gate.headerLimit()).intercept(callLimiter);
    if (tls != null) {
      listener.tls(tls.sslContext());
    } else {
      log.warn(
          "listen.plaintext is true: clients connect WITHOUT TLS; tokens cross the network in the clear");
      if (!config.listen().loopbackOnly()) {
        log.warn(
            "listen.plaintext_beyond_loopback: plaintext on {}, reachable from other hosts;"
                + " only safe where the network itself encrypts (a service mesh)",
            config.listen().address());
      }
    }
    Server server = listener.start(methods, health.getHealthService());
    log.info(
        "Sparkgate listening on {}:{} ({}), forwarding to {} (sessions: {})",
        config.listen().address(),
        server.getPort(),
        tls != null ? "TLS" : "plaintext",
        config.pools().values().stream()
            .collect(
                java.util.stream.Collectors.toMap(
                    PoolConfig::name,
                    p ->
                        Stream.concat(
                                p.backends().stream().map(b -> b.address()),
                                p.dns().stream().map(d -> "dns " + d.source()))
                            .toList())),
        config.sessions().store().name().toLowerCase(java.util.Locale.ROOT));
    return server;
  }

  /**
   * Ready when listening and not draining, the policy of every pool in force, the audit log taking records
   * (where {@code audit.required}), a backend up in every pool, and Redis connected (with {@code store: redis}).
   */
  static final String ANONYMOUS_FALLBACK =
      "anonymous: fallback is on: callers without credentials are served as user 'anonymous'";

  private static Readiness readiness(
      ProxyConfig config, AuditLog auditLog, Router router, Redis redis) {
    Readiness readiness = new Readiness();
    if (auditLog != null && config.audit().required()) {
      readiness.add("audit", auditLog::problem);
    }
    readiness.add("backends", router::poolsWithoutBackend);
    if (config.auth().anonymousFallback()) {
      readiness.note("anonymous", ANONYMOUS_FALLBACK);
    }
    if (redis != null) {
      readiness.add(
          "sessions",
          () ->
              redis.up()
                  ? Optional.empty()
                  : Optional.of("the session registry's Redis is not connected"));
    }
    return readiness;
  }

  /**
   * Keeps the gRPC health service saying what readiness says, so that a client or balancer checking health on
   * the proxy port sees the same as one asking {@code /readyz}: within a quarter of a second (a check reads
   * state the components keep, so this costs next to nothing).
   */
  private static ScheduledExecutorService watchReadiness(
      Readiness readiness, HealthStatusManager health) {
    ScheduledExecutorService watch =
        Executors.newSingleThreadScheduledExecutor(daemons("sparkgate-readiness"));
    Runnable sync =
        () -> {
          ServingStatus status =
              readiness.evaluate().ready() ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
          health.setStatus("", status);
          health.setStatus(ProxyRegistry.SERVICE_NAME, status);
        };
    sync.run();
    watch.scheduleWithFixedDelay(sync, 250, 250, TimeUnit.MILLISECONDS);
    return watch;
  }

  /** The admin listener's port (the bound one, when the configuration asked for 0); -1 without it. */
  public int adminPort() {
    return admin == null ? -1 : admin.port();
  }

  /** The port the metrics are scraped from: the admin listener's. */
  public int metricsPort() {
    return adminPort();
  }

  /** What readiness says now. */
  public Readiness.Report readiness() {
    return readiness.evaluate();
  }

  /** The port clients connect to (the bound one, when the configuration asked for port 0). */
  public int port() {
    return server.getPort();
  }

  public void awaitTermination() throws InterruptedException {
    server.awaitTermination();
  }

  /**
   * Stops as a proxy behind a load balancer should (SIGTERM): not ready at once, on the admin listener and the
   * health service, while new calls are still accepted for {@code listen.drain_delay} so that balancers take
   * it out of rotation before anyone is refused; then {@link #close()}.
   */
  public void drainAndClose() {
    Duration delay = config.listen().drainDelay();
    readiness.drain();
    health.setStatus("", ServingStatus.NOT_SERVING);
    health.setStatus(ProxyRegistry.SERVICE_NAME, ServingStatus.NOT_SERVING);
    log.info("draining: not ready; still accepting calls for listen.drain_delay ({})", delay);
    try {
      Thread.sleep(delay.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    close();
  }

  /**
   * Stops accepting calls (GOAWAY to every client), lets running calls finish within {@code
   * listen.shutdown_grace}, cancels the rest, and flushes the audit log.
   */
  @Override
  public void close() {
    Duration grace = config.listen().shutdownGrace();
    readiness.drain();
    readinessWatch.shutdownNow();
    health.enterTerminalState();
    server.shutdown();
    try {
      if (!server.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
        log.warn("calls still running after listen.shutdown_grace ({}); cancelling them", grace);
        server.shutdownNow();
        server.awaitTermination(10, TimeUnit.SECONDS);
      }
      // Let callbacks already queued (the cancellations just caused) run: they write audit records.
      callExecutor.shutdown();
      callExecutor.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      server.shutdownNow();
      parts.close();
    }
    log.info("Sparkgate stopped");
  }

  private static ThreadFactory daemons(String prefix) {
    AtomicInteger next = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + next.getAndIncrement());
      t.setDaemon(true);
      return t;
    };
  }

  /**
   * {@code feature} with its stage timed on each call whose span records (an event of the span, under {@code
   * name}); as it is without tracing.
   */
  private static Feature timed(Tracing tracing, String name, Feature feature) {
    return tracing == null || feature.stage() == null
        ? feature
        : new Feature(tracing.timed(name, feature.stage()), feature.watch());
  }

  /** What one part of the proxy adds to it: its stage of every call (null: none), and what metrics show of it. */
  private record Feature(Stage stage, Consumer<ProxyMetrics> watch) {
    static final Feature NONE = new Feature(null, m -> {});

    /** A stage the metrics do not watch; none for null. */
    static Feature of(Stage stage) {
      return new Feature(stage, m -> {});
    }

    static Pipeline pipeline(List<Feature> features) {
      return Pipeline.of(features.stream().map(Feature::stage).filter(Objects::nonNull).toList());
    }
  }

  /**
   * What start() built, stopped in the reverse order: what a part uses outlives it, and the audit log, built
   * first, is closed last, so that it gets every record.
   */
  private static final class Parts {
    private final Deque<AutoCloseable> built = new ArrayDeque<>();

    /** Adds {@code part} (nothing for null) and returns it. */
    <T extends AutoCloseable> T add(T part) {
      if (part != null) built.push(part);
      return part;
    }

    <T> T add(T part, Consumer<T> stop) {
      if (part != null) built.push(() -> stop.accept(part));
      return part;
    }

    void close() {
      while (!built.isEmpty()) {
        AutoCloseable part = built.pop();
        try {
          part.close();
        } catch (Exception | Error e) {
          log.warn("stopping a part of the proxy failed", e);
        }
      }
    }
  }
}
