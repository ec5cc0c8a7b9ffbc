package io.sparkgate;

import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.MetadataUtils;
import io.sparkgate.admin.AdminApi;
import io.sparkgate.admin.AdminHandler;
import io.sparkgate.admin.AdminResponse;
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
import io.sparkgate.config.AdminConfig;
import io.sparkgate.config.BackendConfig;
import io.sparkgate.config.LimitsConfig;
import io.sparkgate.config.ListenConfig;
import io.sparkgate.config.PoolConfig;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.config.SecretPatterns;
import io.sparkgate.config.SessionsConfig;
import io.sparkgate.forward.BackendTransport;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.EventLoops;
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
import io.sparkgate.policy.Policy;
import io.sparkgate.policy.PolicyStage;
import io.sparkgate.policy.PolicyStore;
import io.sparkgate.quota.QuotaStage;
import io.sparkgate.redact.ConfigRedaction;
import io.sparkgate.redis.Redis;
import io.sparkgate.route.Router;
import io.sparkgate.tls.ServerTls;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running proxy: the client-facing server (TLS, health service, the Spark Connect methods) joined to the
 * backends of its pools. Every call passes the stages in the order it meets them: authenticate, route,
 * inspect and decide by its pool's policy, place, then forward, with audit around them all ({@link
 * Pipeline}). Start it with {@link #start}; {@link
 * #close} stops it gracefully.
 */
public final class Sparkgate implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Sparkgate.class);

  /** Spark's error trailers carry JSON error details; grpc-java's 8 KiB default is too small for them. */
  private static final int MAX_BACKEND_METADATA_BYTES = 1024 * 1024;

  /**
   * A fixed HTTP/2 flow-control window for what clients send (plans, artifact chunks). gRPC's default
   * auto-tuning measures each connection's bandwidth-delay product by sending a PING whenever data arrives
   * and none is outstanding: for a proxy, a PING and its ACK for nearly every small call, each waking the
   * peer. (The backend side is set in {@link BackendTransport}.)
   */
  static final int CLIENT_WINDOW_BYTES = 4 * 1024 * 1024;

  private final ProxyConfig config;
  private final Server server;
  private final EventLoops loops;
  private final ServerTls tls;
  private final HealthStatusManager health;
  private final ExecutorService callExecutor;
  private final AuditLog auditLog; // null when audit is off
  private final Map<String, PolicyStage> policies; // by pool; empty without policies
  private final Router router;
  private final QuotaStage quotas; // null without quotas
  private final Redis redis; // null with sessions.store: memory
  private final ProxyMetrics metrics; // null without an admin listener
  private final Readiness readiness;
  private final AdminServer admin; // null without an admin listener
  private final ScheduledExecutorService readinessWatch;

  private Sparkgate(
      ProxyConfig config,
      Server server,
      EventLoops loops,
      ServerTls tls,
      HealthStatusManager health,
      ExecutorService callExecutor,
      AuditLog auditLog,
      Map<String, PolicyStage> policies,
      Router router,
      QuotaStage quotas,
      Redis redis,
      ProxyMetrics metrics,
      Readiness readiness,
      AdminServer admin,
      ScheduledExecutorService readinessWatch) {
    this.config = config;
    this.server = server;
    this.loops = loops;
    this.tls = tls;
    this.health = health;
    this.callExecutor = callExecutor;
    this.auditLog = auditLog;
    this.policies = policies;
    this.router = router;
    this.quotas = quotas;
    this.redis = redis;
    this.metrics = metrics;
    this.readiness = readiness;
    this.admin = admin;
    this.readinessWatch = readinessWatch;
  }

  /** Starts a proxy for this configuration; the listening port is bound when this returns. */
  public static Sparkgate start(ProxyConfig config) throws IOException {
    return start(config, CallHook.Factory.PASS_THROUGH);
  }

  static Sparkgate start(ProxyConfig config, CallHook.Factory hooks) throws IOException {
    ListenConfig listen = config.listen();
    int maxMessage = (int) listen.maxInboundMessageBytes();
    Map<String, String> tokens = backendTokens(config);
    EventLoops loops =
        EventLoops.start(
            listen.eventLoops(),
            listen.eventLoopSpin(),
            address -> backendChannel(address, maxMessage, backendsByAddress(config)),
            config.firstBackend().address());
    ServerTls tls = null;
    AuditLog auditLog = null;
    Map<String, PolicyStage> policies = new LinkedHashMap<>();
    Router router = null;
    QuotaStage quotas = null;
    Redis redis = null;
    ProxyMetrics metrics = null;
    AdminServer admin = null;
    ScheduledExecutorService readinessWatch = null;
    // Calls run on the event loops (see EventLoops) except for request messages too large to
    // inspect there (or waiting on the session registry), which go to this fixed pool: a flood of
    // them cannot grow the proxy's thread count.
    ExecutorService callExecutor =
        Executors.newFixedThreadPool(
            Math.max(4, 2 * Runtime.getRuntime().availableProcessors()), new CallThreadFactory());
    try {
      if (config.tls().isPresent()) {
        var t = config.tls().get();
        tls =
            ServerTls.load(
                t.certFile(), t.keyFile(), t.clientCaFile().orElse(null), t.reloadInterval());
      }
      HealthStatusManager health = new HealthStatusManager();
      Authentication auth = Authentication.create(config.auth());
      AuditStage audit = null;
      if (config.audit().enabled()) {
        auditLog = AuditLog.open(config.audit(), Clock.systemUTC());
        audit = new AuditStage(auditLog, Clock.systemUTC());
      } else {
        log.warn("no audit section in the configuration: calls are NOT audited");
      }
      if (config.sessions().store() == SessionsConfig.Store.REDIS) {
        redis = Redis.connect(config.sessions());
      }
      router =
          Router.start(
              config, address -> withToken(loops.backend(address), tokens.get(address)), redis);
      router.watch(config, config.policy().reloadInterval());
      if (config.policyEnabled()) {
        for (PoolConfig pool : config.pools().values()) {
          // The profiler asks the backend as the proxy does, so it needs the backend token too.
          String first = pool.backends().get(0).address();
          policies.put(
              pool.name(),
              PolicyStage.start(
                  config,
                  pool.name(),
                  withToken(loops.backend(first), tokens.get(first)),
                  IcebergTimeTravelPolicyRewriter.all(),
                  redis == null
                      ? null
                      : new RedisSessionStates(redis, pool.name(), SessionTracker.IDLE)));
        }
      } else {
        log.warn(
            "no policy section in the configuration: requests are NOT checked against any policy");
      }
      if (config.quotas().enabled()) {
        quotas = QuotaStage.create(config.quotas(), Optional.ofNullable(redis));
      }
      List<Stage> stages = new ArrayList<>(stages(config, auth, audit, policies, quotas, router));
      // The admin API's live view: inside audit, so it too sees every call end, refusals included.
      LiveCalls live =
          config.admin().enabled()
              ? new LiveCalls(Clock.systemUTC(), config.sessions().idleTimeout())
              : null;
      if (live != null) {
        stages.add(audit != null ? 1 : 0, live);
      }
      if (hooks != CallHook.Factory.PASS_THROUGH) {
        stages.add(
            call ->
                hooks.newCall(
                    ProxyRegistry.method(call.method()), call.headers(), call.transport()));
      }
      ProxyRegistry methods =
          new ProxyRegistry(
              loops, callExecutor, tokens, listen.forwardHeaders(), Pipeline.of(stages));
      LimitsConfig limits = config.limits();
      ConnectionGate gate = new ConnectionGate(limits);
      CallLimiter callLimiter = new CallLimiter(limits, methods.buffered()::now);
      NettyServerBuilder builder =
          loops
              .serve(
                  NettyServerBuilder.forAddress(
                      new InetSocketAddress(listen.address(), listen.port())),
                  gate.acceptor())
              .directExecutor()
              .addService(health.getHealthService())
              .fallbackHandlerRegistry(methods)
              .addTransportFilter(gate.transportFilter())
              .addTransportFilter(auth.transportFilter())
              // Refuses before any stage runs; registered first, so it runs last of the
              // interceptors: the metrics interceptor (added below) still counts what it refuses.
              .intercept(callLimiter)
              .intercept(gate.headerLimit())
              .maxInboundMessageSize(maxMessage)
              // Headers over limits.max_header_bytes get a clear status from headerLimit(); blocks
              // far larger are refused by gRPC, and Netty closes a connection whose CONTINUATION
              // frames add up to more still.
              .maxInboundMetadataSize(gate.transportHeaderLimit())
              // HTTP/2 rapid reset: a connection resetting more streams than this is sent GOAWAY.
              .maxRstFramesPerWindow(
                  limits.maxStreamResets(), (int) limits.streamResetWindow().toSeconds())
              .flowControlWindow(CLIENT_WINDOW_BYTES)
              .maxConcurrentCallsPerConnection(listen.maxConcurrentStreams())
              .handshakeTimeout(listen.handshakeTimeout().toMillis(), TimeUnit.MILLISECONDS)
              .keepAliveTime(listen.keepaliveTime().toMillis(), TimeUnit.MILLISECONDS)
              .keepAliveTimeout(20, TimeUnit.SECONDS)
              // Spark's JVM client pings idle connections every 10 s or so; let it.
              .permitKeepAliveTime(5, TimeUnit.SECONDS)
              .permitKeepAliveWithoutCalls(true);
      if (config.admin().enabled()) {
        metrics = ProxyMetrics.create();
        builder.intercept(metrics.interceptor()); // every call, the refused ones included
        metrics.watch(auth);
        metrics.watch(loops);
        metrics.watch(methods);
        metrics.watch(gate, callLimiter, methods.buffered());
        metrics.watch(router);
        if (quotas != null) {
          metrics.watch(quotas);
        }
        if (audit != null) {
          metrics.watch(auditLog, audit);
        }
        for (var p : policies.entrySet()) {
          metrics.watch(p.getKey(), p.getValue());
        }
        if (tls != null) {
          metrics.watch(tls);
        }
      }
      if (tls != null) {
        builder.sslContext(tls.sslContext());
      } else {
        log.warn(
            "listen.plaintext is true: clients connect WITHOUT TLS; tokens cross the network in the clear");
        if (!listen.loopbackOnly()) {
          log.warn(
              "listen.plaintext_beyond_loopback: plaintext on {}, reachable from other hosts;"
                  + " only safe where the network itself encrypts (a service mesh)",
              listen.address());
        }
      }
      Server server = builder.build().start();
      Readiness readiness = readiness(config, auditLog, router, redis);
      readinessWatch = watchReadiness(readiness, health);
      if (config.admin().enabled()) {
        try {
          admin =
              AdminServer.start(
                  config.admin(),
                  adminApi(live, router, policies, auditLog, loops, tokens)
                      .register(adminRoutes(config.admin(), readiness, metrics)));
        } catch (IOException | RuntimeException e) {
          server.shutdownNow();
          throw e;
        }
      }
      log.info(
          "Sparkgate listening on {}:{} ({}), forwarding to {} (sessions: {})",
          listen.address(),
          server.getPort(),
          tls != null ? "TLS" : "plaintext",
          router.pools(),
          config.sessions().store().name().toLowerCase(java.util.Locale.ROOT));
      return new Sparkgate(
          config,
          server,
          loops,
          tls,
          health,
          callExecutor,
          auditLog,
          policies,
          router,
          quotas,
          redis,
          metrics,
          readiness,
          admin,
          readinessWatch);
    } catch (IOException | RuntimeException e) {
      if (readinessWatch != null) {
        readinessWatch.shutdownNow();
      }
      release(loops, callExecutor, tls, auditLog, policies, router, quotas, redis, metrics);
      throw e;
    }
  }

  /**
   * Ready when listening and not draining, the policy of every pool in force, the audit log taking records
   * (where {@code audit.required}), a backend up in every pool, and Redis connected (with {@code store: redis}).
   */
  private static Readiness readiness(
      ProxyConfig config, AuditLog auditLog, Router router, Redis redis) {
    Readiness readiness = new Readiness();
    if (auditLog != null && config.audit().required()) {
      readiness.add("audit", auditLog::problem);
    }
    readiness.add("backends", router::poolsWithoutBackend);
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
        Executors.newSingleThreadScheduledExecutor(
            new DefaultThreadFactory("sparkgate-readiness", true));
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

  /** What the admin listener serves: probes, the scrape, and (with them) the admin API and console. */
  private static AdminServer.Routes adminRoutes(
      AdminConfig admin, Readiness readiness, ProxyMetrics metrics) {
    return new AdminServer.Routes()
        .open("/healthz", AdminHandler.getOnly(r -> AdminResponse.text(200, "ok\n")))
        .open(
            "/readyz",
            AdminHandler.getOnly(
                r -> {
                  Readiness.Report report = readiness.evaluate();
                  return AdminResponse.json(report.ready() ? 200 : 503, report);
                }))
        .exact(
            admin.metricsPath(),
            AdminHandler.getOnly(
                r ->
                    new AdminResponse(
                        200,
                        "text/plain; version=0.0.4; charset=utf-8",
                        metrics.scrape().getBytes(java.nio.charset.StandardCharsets.UTF_8))));
  }

  /** The admin API's views of this proxy: read-only, but for the two operator actions. */
  private static AdminApi adminApi(
      LiveCalls live,
      Router router,
      Map<String, PolicyStage> policies,
      AuditLog auditLog,
      EventLoops loops,
      Map<String, String> tokens) {
    return new AdminApi(
        new AdminApi.Views(
            live,
            router::backendsByPool,
            () ->
                policies.entrySet().stream()
                    .map(
                        e -> {
                          PolicyStore store = e.getValue().store();
                          Policy p = store.current();
                          return new AdminApi.PoolPolicy(
                              e.getKey(),
                              p.files(),
                              p.ruleNames(),
                              p.defaultEffect().name().toLowerCase(java.util.Locale.ROOT),
                              store.reloads(),
                              store.rejected(),
                              store.loadedAt(),
                              store.lastError());
                        })
                    .toList(),
            policies.isEmpty()
                ? null
                : (pool, sql, method, request, principal, groups) -> {
                  PolicyStage p = policies.get(pool);
                  return p == null ? null : p.explain(sql, method, request, principal, groups);
                },
            AdminApi.Actions.overSparkConnect(
                address -> withToken(loops.backend(address), tokens.get(address))),
            router::forget,
            auditLog == null ? null : auditLog::write,
            Clock.systemUTC()));
  }

  private static NettyChannelBuilder backendChannel(
      String address, int maxMessage, Map<String, BackendConfig> backends) {
    int colon = address.lastIndexOf(':');
    String host = address.substring(0, colon);
    if (host.startsWith("[")) host = host.substring(1, host.length() - 1);
    BackendConfig backend = backends.get(address);
    return BackendTransport.plaintext(
            NettyChannelBuilder.forAddress(host, Integer.parseInt(address.substring(colon + 1))),
            backend == null ? BackendConfig.DEFAULT_CONNECT_TIMEOUT : backend.connectTimeout(),
            backend == null ? BackendConfig.DEFAULT_HANDSHAKE_TIMEOUT : backend.handshakeTimeout())
        .maxInboundMessageSize(maxMessage)
        .maxInboundMetadataSize(MAX_BACKEND_METADATA_BYTES)
        // Backend callbacks only hand bytes to the client's transport: no need for a thread hop.
        .directExecutor()
        // The client retries if it wants to: a proxy replaying an ExecutePlan could run it twice,
        // and gRPC's retry machinery buffers every message of every call even when it never
        // retries.
        .disableRetry();
  }

  /** Each backend's settings by {@code host:port}; where pools name one address twice, the first entry's. */
  private static Map<String, BackendConfig> backendsByAddress(ProxyConfig config) {
    Map<String, BackendConfig> backends = new HashMap<>();
    for (PoolConfig pool : config.pools().values()) {
      for (BackendConfig b : pool.backends()) {
        backends.putIfAbsent(b.address(), b);
      }
    }
    return backends;
  }

  /** The token of each backend that has one, by {@code host:port}. */
  private static Map<String, String> backendTokens(ProxyConfig config) {
    Map<String, String> tokens = new HashMap<>();
    for (PoolConfig pool : config.pools().values()) {
      for (BackendConfig b : pool.backends()) {
        b.token().ifPresent(t -> tokens.put(b.address(), t.reveal()));
      }
    }
    return Map.copyOf(tokens);
  }

  private static Channel withToken(Channel channel, String token) {
    return token == null
        ? channel
        : ClientInterceptors.intercept(
            channel, MetadataUtils.newAttachHeadersInterceptor(bearer(token)));
  }

  /**
   * The stages of every call, in the order a call meets them: audit (when on) around them all, authenticate,
   * route (the pool and the backend holding the session), then the pool's own inspect and decide (without a
   * policy, inspect reads only the request head), quotas (refused requests never count), and last the
   * placement of a new session.
   *
   * @param audit null without an audit section
   * @param policies each pool's policy stage; empty without policies
   * @param quotas null without quotas
   */
  public static List<Stage> stages(
      ProxyConfig config,
      Authentication auth,
      AuditStage audit,
      Map<String, PolicyStage> policies,
      QuotaStage quotas,
      Router router) {
    List<Stage> stages = new ArrayList<>();
    if (audit != null) {
      stages.add(audit);
    }
    stages.add(auth.stage());
    stages.add(new HeadStage(config.auth()));
    stages.add(new ConfigRedaction(new SecretPatterns(config.auth().secretPatterns())));
    stages.add(router.routeStage());
    if (!policies.isEmpty()) {
      Map<String, Pipeline> byPool = new HashMap<>();
      Inspector inspector = policyInspector(config);
      policies.forEach(
          (pool, policy) ->
              byPool.put(
                  pool,
                  Pipeline.of(InspectStage.full(inspector, policy.sessions()), policy.stage())));
      stages.add(
          new PoolStages(byPool::get, config.sessions().store() == SessionsConfig.Store.REDIS));
    }
    if (quotas != null) {
      stages.add(quotas);
    }
    stages.add(router.placeStage());
    return List.copyOf(stages);
  }

  /**
   * The stages of a proxy with one backend and no session registry (tools and benchmarks that build the
   * pipeline themselves): every call is routed to the first backend.
   *
   * @param policy null without a policy section
   */
  public static List<Stage> stages(
      ProxyConfig config, Authentication auth, AuditStage audit, PolicyStage policy) {
    List<Stage> stages = new ArrayList<>();
    if (audit != null) {
      stages.add(audit);
    }
    stages.add(auth.stage());
    stages.add(new HeadStage(config.auth()));
    stages.add(new ConfigRedaction(new SecretPatterns(config.auth().secretPatterns())));
    if (policy != null) {
      stages.add(InspectStage.full(policyInspector(config), policy.sessions()));
      stages.add(policy.stage());
    }
    Route only =
        new Route(config.pools().keySet().iterator().next(), config.firstBackend().address());
    stages.add(
        call -> {
          call.route(only);
          return CallHook.PASS_THROUGH;
        });
    return List.copyOf(stages);
  }

  /** The inspector a policy decides on, with the configuration's bounds. */
  private static Inspector policyInspector(ProxyConfig config) {
    return new Inspector(
        InspectorConfig.DEFAULTS.withMaxDecompressedBytes(
            config.policy().maxDecompressedPlanBytes()));
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
      if (admin != null) {
        admin.close();
      }
      release(loops, callExecutor, tls, auditLog, policies, router, quotas, redis, metrics);
    }
    log.info("Sparkgate stopped");
  }

  /** Releases what start() built besides the server; the audit log last, so that it gets every record. */
  private static void release(
      EventLoops loops,
      ExecutorService callExecutor,
      ServerTls tls,
      AuditLog auditLog,
      Map<String, PolicyStage> policies,
      Router router,
      QuotaStage quotas,
      Redis redis,
      ProxyMetrics metrics) {
    if (metrics != null) {
      metrics.close();
    }
    if (router != null) {
      router.close();
    }
    if (quotas != null) {
      quotas.close();
    }
    callExecutor.shutdownNow();
    loops.close();
    if (tls != null) {
      tls.close();
    }
    policies.values().forEach(PolicyStage::close);
    if (redis != null) {
      redis.close();
    }
    if (auditLog != null) {
      auditLog.close();
    }
  }

  private static Metadata bearer(String token) {
    Metadata m = new Metadata();
    m.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
    return m;
  }

  private static final class CallThreadFactory implements ThreadFactory {
    private final AtomicInteger next = new AtomicInteger();

    @Override
    public Thread newThread(Runnable r) {
      Thread t = new Thread(r, "sparkgate-call-" + next.getAndIncrement());
      t.setDaemon(true);
      return t;
    }
  }
}
