package io.sparkgate.metrics;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.grpc.ConnectivityState;
import io.grpc.ServerInterceptor;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sparkgate.audit.AuditLog;
import io.sparkgate.audit.AuditStage;
import io.sparkgate.auth.Authentication;
import io.sparkgate.discovery.DnsDiscovery;
import io.sparkgate.engine.Engines;
import io.sparkgate.forward.BufferedBytes;
import io.sparkgate.forward.EventLoops;
import io.sparkgate.forward.ProxyRegistry;
import io.sparkgate.limits.Abuse;
import io.sparkgate.limits.CallLimiter;
import io.sparkgate.limits.ConnectionGate;
import io.sparkgate.policy.DecisionCounts;
import io.sparkgate.policy.PolicyStage;
import io.sparkgate.quota.QuotaStage;
import io.sparkgate.revoke.Revocation;
import io.sparkgate.revoke.Revocations;
import io.sparkgate.route.BackendHealth;
import io.sparkgate.route.Router;
import io.sparkgate.tls.ServerTls;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy's meters, shown by {@link #scrape()} on the admin listener. Calls are counted by {@link #interceptor()}; the other
 * stages keep their own counts (cheap adders on their paths) and are read here only when scraped, so a stage
 * does not depend on the metrics library and a proxy without a metrics section pays nothing.
 *
 * <p>Labels are bounded by the configuration: methods, status codes, refusal reasons and policy rule names.
 * No label ever carries a principal, a token, a session or anything from a request.
 */
public final class ProxyMetrics implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ProxyMetrics.class);

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final CallMeters calls = new CallMeters(registry);

  /** Meters read objects through weak references: these keep the watched stages reachable. */
  private final List<Object> watched = new ArrayList<>();

  private final List<AutoCloseable> binders = new ArrayList<>();

  @GuardedBy("this")
  private final Map<String, DecisionCounts> decisions = new LinkedHashMap<>();

  @GuardedBy("this")
  private final Set<String> decisionMeters = new HashSet<>(); // pool and key

  private ProxyMetrics() {
    for (MeterBinder b :
        List.of(
            new JvmMemoryMetrics(),
            new JvmThreadMetrics(),
            new ClassLoaderMetrics(),
            new ProcessorMetrics(),
            new UptimeMetrics(),
            new FileDescriptorMetrics())) {
      b.bindTo(registry);
    }
    JvmGcMetrics gc = new JvmGcMetrics();
    gc.bindTo(registry);
    binders.add(gc);
    // Netty's buffers live outside the JVM's direct-buffer pools, so jvm_buffer_* does not show
    // them.
    Gauge.builder("sparkgate.netty.direct.memory.used", EventLoops::directMemoryUsed)
        .description("Direct memory held by the network buffers (-1: not tracked)")
        .baseUnit("bytes")
        .register(registry);
  }

  /** The meters; {@link #scrape()} shows them (the admin listener serves it). */
  public static ProxyMetrics create() {
    return new ProxyMetrics();
  }

  /** Counts and times every call; register it so that it runs before every other interceptor. */
  public ServerInterceptor interceptor() {
    return calls;
  }

  /** Refusals by reason, and failed JWKS fetches. */
  public void watch(Authentication auth) {
    watched.add(auth);
    for (String reason : auth.refusals().keySet()) {
      FunctionCounter.builder(
              "sparkgate.auth.failures", auth, a -> a.refusals().getOrDefault(reason, 0L))
          .description("Calls refused by authentication, by reason")
          .tag("reason", reason.toLowerCase(Locale.ROOT))
          .register(registry);
    }
    Gauge.builder("sparkgate.auth.anonymous.fallback", auth, a -> a.anonymousFallback() ? 1 : 0)
        .description(
            "1 when callers without credentials are let in as 'anonymous' beside other methods")
        .register(registry);
    FunctionCounter.builder("sparkgate.auth.anonymous.calls", auth, Authentication::anonymousCalls)
        .description("Calls let in as user 'anonymous'")
        .register(registry);
    if (auth.fetchesJwks()) {
      FunctionCounter.builder(
              "sparkgate.jwks.fetch.failures", auth, Authentication::jwksFetchFailures)
          .description("JWKS fetches that failed; the last good keys stayed in use")
          .register(registry);
    }
  }

  /** Principals and tokens revoked now, and the calls refused because of it. */
  public void watch(Revocations revocations) {
    watched.add(revocations);
    for (Revocation.Kind kind : Revocation.Kind.values()) {
      Gauge.builder(
              "sparkgate.revocations.active",
              revocations,
              r -> r.active().stream().filter(x -> x.kind() == kind).count())
          .description("Principals and tokens revoked now (not counting the denied jti file's)")
          .tag("kind", kind.key())
          .register(registry);
      FunctionCounter.builder("sparkgate.revocations.refused", revocations, r -> r.refused(kind))
          .description("Calls refused because their principal or token was revoked")
          .tag("kind", kind.key())
          .register(registry);
    }
  }

  /** The audit log's records, its queue, and the calls refused because it could not take their record. */
  public void watch(AuditLog audit, AuditStage interceptor) {
    watched.add(audit);
    watched.add(interceptor);
    FunctionCounter.builder("sparkgate.audit.records.written", audit, AuditLog::written)
        .description("Audit records written to the log")
        .register(registry);
    FunctionCounter.builder("sparkgate.audit.records.dropped", audit, AuditLog::dropped)
        .description("Audit records lost because the queue was full or the disk failed")
        .register(registry);
    FunctionCounter.builder("sparkgate.audit.fsyncs", audit, AuditLog::syncs)
        .description("Times the audit log was forced to disk")
        .register(registry);
    Gauge.builder("sparkgate.audit.queue.records", audit, AuditLog::queued)
        .description("Audit records waiting for the writer")
        .register(registry);
    FunctionCounter.builder(
            "sparkgate.audit.refused.calls", interceptor, AuditStage::refusedUnaudited)
        .description(
            "Calls refused because audit.required is on and the log could not take their record")
        .register(registry);
  }

  /**
   * Decisions by outcome and rule, policy reloads, and whether the backends' profile is known, for the pool
   * whose policy stage this is.
   */
  public synchronized void watch(String pool, PolicyStage policy) {
    watched.add(policy);
    decisions.put(pool, policy.decisions());
    FunctionCounter.builder("sparkgate.policy.reloads", policy, p -> p.store().reloads())
        .description("Changed policies put in force without a restart")
        .tag("pool", pool)
        .register(registry);
    FunctionCounter.builder("sparkgate.policy.reloads.rejected", policy, p -> p.store().rejected())
        .description("Changed policies that did not compile; the last good one stayed in force")
        .tag("pool", pool)
        .register(registry);
    Gauge.builder(
            "sparkgate.policy.reload.failing", policy, p -> p.store().lastError() == null ? 0 : 1)
        .description(
            "1 while the policy file on disk is not the one in force because it does not compile")
        .tag("pool", pool)
        .register(registry);
    policy.opa().ifPresent(opa -> watchOpa(pool, opa));
    Gauge.builder("sparkgate.backend.profile.known", policy, p -> p.profileKnown() ? 1 : 0)
        .description(
            "1 once the backend's version, extensions and catalogs are known; rules that need them refuse until then")
        .tag("pool", pool)
        .register(registry);
  }

  /** What the pool asked OPA ({@code policy.opa}): questions sent, answered from the cache, failed. */
  private void watchOpa(String pool, io.sparkgate.opa.OpaClient opa) {
    FunctionCounter.builder("sparkgate.opa.requests", opa, io.sparkgate.opa.OpaClient::asked)
        .description("Questions sent to OPA (cache misses)")
        .tag("pool", pool)
        .register(registry);
    FunctionCounter.builder("sparkgate.opa.cache.hits", opa, io.sparkgate.opa.OpaClient::cacheHits)
        .description("Questions answered from the cache of OPA's decisions")
        .tag("pool", pool)
        .register(registry);
    FunctionCounter.builder("sparkgate.opa.errors", opa, io.sparkgate.opa.OpaClient::errors)
        .description("Questions OPA gave no usable answer to (on_error decided)")
        .tag("pool", pool)
        .register(registry);
  }

  /** The router, for the backends DNS finds: their {@code sparkgate_backend_up} rows change as they do. */
  private volatile Router router;

  /** {@code sparkgate_backend_up} of the backends DNS names now, rewritten at each scrape; null without. */
  @GuardedBy("this")
  private MultiGauge discoveredUp;

  @GuardedBy("this")
  private List<String> dnsPools = List.of();

  /** Backend health, placements, cached sessions and the session registry's Redis. */
  public void watch(Router router) {
    watched.add(router);
    this.router = router;
    router
        .pools()
        .forEach(
            (pool, backends) -> {
              for (String backend : backends) {
                Gauge.builder(
                        "sparkgate.backend.up",
                        router,
                        r -> r.backendStates().get(backend) == BackendHealth.State.DOWN ? 0 : 1)
                    .description(
                        "1 while the backend is usable (up or not yet probed), 0 while it is down")
                    .tag("pool", pool)
                    .tag("backend", backend)
                    .register(registry);
              }
            });
    FunctionCounter.builder("sparkgate.session.placements", router, Router::placements)
        .description("New sessions placed on a backend by this replica")
        .register(registry);
    Gauge.builder("sparkgate.sessions.cached", router, Router::cachedSessions)
        .description("Sessions whose placement this replica has cached")
        .register(registry);
    FunctionCounter.builder(
            "sparkgate.session.registry.unavailable", router, Router::registryUnavailable)
        .description(
            "Requests refused (UNAVAILABLE) because the session registry could not be asked")
        .register(registry);
    FunctionCounter.builder("sparkgate.redis.errors", router, Router::redisErrors)
        .description("Redis commands that failed or timed out")
        .register(registry);
    Gauge.builder("sparkgate.redis.up", router, r -> r.registryUp() ? 1 : 0)
        .description(
            "1 while the session registry's store answers (always 1 with the memory store)")
        .register(registry);
  }

  /**
   * Each pool's DNS lookups by result, and the backends its last good answers name; each backend found has a
   * {@code sparkgate_backend_up} row while it is in its pool, as a listed one has.
   */
  public synchronized void watch(DnsDiscovery dns) {
    watched.add(dns);
    dnsPools = dns.pools();
    discoveredUp =
        MultiGauge.builder("sparkgate.backend.up")
            .description("1 while the backend is usable (up or not yet probed), 0 while it is down")
            .register(registry);
    for (String pool : dns.pools()) {
      for (String result : DnsDiscovery.results()) {
        FunctionCounter.builder("sparkgate.dns.lookups", dns, d -> d.lookups(pool, result))
            .description(
                "DNS lookups for a pool's dns backends, by result (ok; empty and error keep the last"
                    + " answer)")
            .tag("pool", pool)
            .tag("result", result)
            .register(registry);
      }
      Gauge.builder("sparkgate.dns.backends", dns, d -> d.backends(pool))
          .description("Backends of the pool that DNS names now (its last good answers)")
          .tag("pool", pool)
          .register(registry);
    }
  }

  /** Each engine pool's engines by state, and its launches: how many, how long, how many failed. */
  public void watch(Engines engines) {
    watched.add(engines);
    for (String pool : engines.poolNames()) {
      for (String state : List.of("starting", "ready", "warm")) {
        Gauge.builder(
                "sparkgate.engines",
                engines,
                e -> e.states().getOrDefault(pool, Map.of()).getOrDefault(state, 0))
            .description(
                "Engines this replica owns, by pool and state (warm: ready, not yet handed out)")
            .tag("pool", pool)
            .tag("state", state)
            .register(registry);
      }
      FunctionCounter.builder("sparkgate.engine.starts", engines, e -> e.starts(pool))
          .description("Engines this replica launched")
          .tag("pool", pool)
          .register(registry);
      FunctionCounter.builder("sparkgate.engine.start.failures", engines, e -> e.failures(pool))
          .description(
              "Engine launches that failed: could not start, exited, or were not serving in time")
          .tag("pool", pool)
          .register(registry);
      FunctionTimer.builder(
              "sparkgate.engine.start",
              engines,
              e -> e.started(pool),
              e -> e.startSeconds(pool),
              TimeUnit.SECONDS)
          .description("Time from launch until an engine served")
          .tag("pool", pool)
          .register(registry);
    }
  }

  /** Calls refused by quota, operations holding a slot here, and whether the counts are shared now. */
  public void watch(QuotaStage quotas) {
    watched.add(quotas);
    for (String quota : quotas.refusals().keySet()) {
      FunctionCounter.builder(
              "sparkgate.quota.refusals", quotas, q -> q.refusals().getOrDefault(quota, 0L))
          .description(
              "Calls refused by a quota, by quota (per_principal.concurrent_operations ...)")
          .tag("quota", quota)
          .register(registry);
    }
    Gauge.builder("sparkgate.quota.operations.held", quotas, QuotaStage::heldOperations)
        .description("Operations holding a concurrent-operation slot on this replica")
        .register(registry);
    Gauge.builder("sparkgate.quota.shared", quotas, q -> q.shared() ? 1 : 0)
        .description(
            "1 while quota counts are shared across replicas through Redis; 0 without Redis or while it is away")
        .register(registry);
    FunctionCounter.builder("sparkgate.quota.local.fallbacks", quotas, QuotaStage::localFallbacks)
        .description("ExecutePlan starts this replica decided alone because Redis was away")
        .register(registry);
  }

  /** Backend connections by state. */
  public void watch(EventLoops loops) {
    watched.add(loops);
    for (ConnectivityState state : ConnectivityState.values()) {
      Gauge.builder(
              "sparkgate.backend.connections", loops, l -> l.backendStates().getOrDefault(state, 0))
          .description("Backend connections (one per event loop) by state; READY ones are serving")
          .tag("state", state.name().toLowerCase(Locale.ROOT))
          .register(registry);
    }
  }

  /** When the served certificate expires, so that an alert fires before clients start failing. */
  public void watch(ServerTls tls) {
    watched.add(tls);
    Gauge.builder(
            "sparkgate.tls.certificate.not.after",
            tls,
            t -> t.certificateNotAfter().getEpochSecond())
        .description(
            "Expiry of the TLS certificate being served, in seconds since the epoch (follows reloads)")
        .baseUnit("seconds")
        .register(registry);
  }

  /** Calls that named no Spark Connect method (gRPC refuses them before any interceptor sees them). */
  public void watch(ProxyRegistry methods) {
    watched.add(methods);
    FunctionCounter.builder("sparkgate.unknown.methods", methods, ProxyRegistry::unknownMethods)
        .description("Calls refused as UNIMPLEMENTED because they named no Spark Connect method")
        .register(registry);
  }

  /**
   * Client connections open and refused, connections that never completed their set-up, HTTP/2 abuse cut
   * off, and calls refused by the global limits.
   */
  public void watch(ConnectionGate gate, CallLimiter calls, BufferedBytes buffered) {
    watched.add(gate);
    watched.add(calls);
    watched.add(buffered);
    Gauge.builder("sparkgate.connections.open", gate, ConnectionGate::open)
        .description("Client connections open now")
        .register(registry);
    for (ConnectionGate.Reason reason : ConnectionGate.Reason.values()) {
      FunctionCounter.builder("sparkgate.connections.refused", gate, g -> g.refused(reason))
          .description(
              "Client connections closed as they were accepted, by the limit they were over")
          .tag("reason", reason.label())
          .register(registry);
    }
    FunctionCounter.builder(
            "sparkgate.connections.unestablished", gate, ConnectionGate::unestablished)
        .description(
            "Client connections closed before TLS and HTTP/2 set-up completed (handshake timeout, failed TLS, not HTTP/2)")
        .register(registry);
    for (Abuse.Kind kind : Abuse.Kind.values()) {
      FunctionCounter.builder("sparkgate.http2.abuse", gate, g -> g.abuse().of(kind))
          .description(
              "HTTP/2 misbehaviour answered by closing the connection (GOAWAY) or refusing the stream, by kind")
          .tag("kind", kind.label())
          .register(registry);
    }
    for (CallLimiter.Limit limit : CallLimiter.Limit.values()) {
      FunctionCounter.builder("sparkgate.overload.refusals", calls, c -> c.refused(limit))
          .description(
              "Calls refused at once (RESOURCE_EXHAUSTED with RetryInfo) because the proxy was at a limit")
          .tag("limit", limit.label())
          .register(registry);
    }
    Gauge.builder("sparkgate.buffered", buffered, BufferedBytes::now)
        .description("Message bytes held between clients and backends now")
        .baseUnit("bytes")
        .register(registry);
  }

  /** Everything, in Prometheus's text format. */
  public synchronized String scrape() {
    Router r = router;
    if (discoveredUp != null && r != null) {
      List<MultiGauge.Row<?>> rows = new ArrayList<>();
      Map<String, Map<String, String>> byPool = r.backendsByPool();
      for (String pool : dnsPools) {
        List<String> listed = r.pools().getOrDefault(pool, List.of());
        byPool
            .getOrDefault(pool, Map.of())
            .forEach(
                (backend, state) -> {
                  if (!listed.contains(backend)) {
                    rows.add(
                        MultiGauge.Row.of(
                            Tags.of("pool", pool, "backend", backend),
                            "down".equals(state) ? 0 : 1));
                  }
                });
      }
      discoveredUp.register(rows, true);
    }
    // Rules get a meter the first time they decide: the policy can change while the proxy runs.
    decisions.forEach(
        (pool, counts) -> {
          for (var e : counts.live().entrySet()) {
            if (decisionMeters.add(pool + "\u0000" + e.getKey())) {
              FunctionCounter.builder("sparkgate.policy.decisions", e.getValue(), LongAdder::sum)
                  .description(
                      "Policy decisions by outcome (allow, deny, rewrite; audit and shadow rules matched) and rule")
                  .tag("pool", pool)
                  .tag("outcome", e.getKey().outcome())
                  .tag("rule", e.getKey().rule())
                  .register(registry);
            }
          }
        });
    return registry.scrape();
  }

  @Override
  public void close() {
    for (AutoCloseable b : binders) {
      try {
        b.close();
      } catch (Exception e) {
        log.debug("closing a metrics binder failed", e);
      }
    }
    registry.close();
  }
}
