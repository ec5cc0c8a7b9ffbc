package io.sparkgate.policy;

import com.github.benmanes.caffeine.cache.Ticker;
import io.grpc.Channel;
import io.sparkgate.call.RequestRewriter;
import io.sparkgate.config.BackendProfileConfig;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.config.SecretPatterns;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.BackendProfiler;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionStates;
import io.sparkgate.inspect.SessionTracker;
import io.sparkgate.inspect.SessionView;
import io.sparkgate.opa.InputDocument;
import io.sparkgate.opa.OpaClient;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The running policy machinery of a proxy: the policy store (hot reload), the backend profile (read at start
 * and periodically, retried in the background while the backend is down), the sessions the inspect stage
 * reads requests in, and the decide stage.
 */
public final class PolicyStage implements AutoCloseable {
  private final ScheduledExecutorService scheduler;
  private final DecideStage stage;
  private final PolicyStore store;
  private final ProfileSource profiles;
  private final SessionTracker sessions;
  private final PolicyEngine engine;
  private final Inspector inspector = new Inspector();

  private PolicyStage(
      ScheduledExecutorService scheduler,
      DecideStage stage,
      PolicyStore store,
      ProfileSource profiles,
      SessionTracker sessions,
      PolicyEngine engine) {
    this.engine = engine;
    this.scheduler = scheduler;
    this.stage = stage;
    this.store = store;
    this.profiles = profiles;
    this.sessions = sessions;
  }

  /**
   * Loads the policy (throws PolicyException if it does not compile) and starts reloading and profiling.
   *
   * @param rewriters the rewriters a rule's {@code rewriter:} may name, by name
   */
  public static PolicyStage start(
      ProxyConfig config, Channel backend, Map<String, RequestRewriter> rewriters) {
    return start(config, config.pools().keySet().iterator().next(), backend, rewriters, null);
  }

  /**
   * As above, for one pool: its policy (its own or {@code policy.file}) and its backends' profile.
   *
   * @param backend a channel to one of the pool's backends, for reading its profile
   * @param states where the pool's replicas share session state; null: this replica's memory
   */
  public static PolicyStage start(
      ProxyConfig config,
      String pool,
      Channel backend,
      Map<String, RequestRewriter> rewriters,
      SessionStates states) {
    PolicyStore store =
        new PolicyStore(
            config.policyOf(pool).orElseThrow(),
            new PolicyCompiler(
                Effect.valueOf(config.policy().defaultEffect().toUpperCase(java.util.Locale.ROOT)),
                rewriters.keySet()));
    BackendProfileConfig pc = config.pool(pool).profile();
    BackendProfiler profiler = new BackendProfiler(backend, "sparkgate-profiler", 10_000);
    ProfileSource profiles =
        new ProfileSource(
            profiler::read,
            new ProfileSource.Overrides(
                pc.sparkVersion().orElse(null),
                pc.extensions().orElse(null),
                pc.catalogs().orElse(null),
                pc.defaultCatalog().orElse(null),
                pc.defaultFs().orElse(null)));
    ScheduledExecutorService scheduler =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "sparkgate-policy-" + pool);
              t.setDaemon(true);
              return t;
            });
    profiles.start(scheduler, pc.refreshInterval());
    store.start(scheduler, config.policy().reloadInterval());
    SessionTracker sessions =
        new SessionTracker(
            () -> {
              BackendProfile p = profiles.current();
              return p == null ? BackendProfile.UNKNOWN : p;
            },
            SessionTracker.IDLE,
            Ticker.systemTicker(),
            states);
    PolicyEngine engine =
        new PolicyEngine(
            store::current, profiles, new SecretPatterns(config.auth().secretPatterns()));
    DecideStage stage =
        new DecideStage(
            engine,
            rewriters,
            config.audit().includeLiterals(),
            config
                .policy()
                .opa()
                .map(
                    o ->
                        new OpaGate(
                            new OpaClient(
                                o,
                                new InputDocument(
                                    config.audit().includeLiterals(),
                                    new SecretPatterns(config.auth().secretPatterns()))),
                            o.allowOnError(),
                            pool))
                .orElse(null));
    return new PolicyStage(scheduler, stage, store, profiles, sessions, engine);
  }

  /** The decide stage of every call. */
  public DecideStage stage() {
    return stage;
  }

  /** The sessions requests are inspected in: what the inspect stage reads, and learns from what passed. */
  public SessionTracker sessions() {
    return sessions;
  }

  /** Every decision since start, by outcome and rule (the metrics endpoint shows them). */
  public DecisionCounts decisions() {
    return stage.counts();
  }

  /** The client asking OPA ({@code policy.opa}), for its meters; empty without OPA. */
  public java.util.Optional<OpaClient> opa() {
    return java.util.Optional.ofNullable(stage.opaClient());
  }

  /** Whether the backend's profile is known; rules that depend on it refuse while it is not. */
  public boolean profileKnown() {
    return profiles.current() != null;
  }

  /**
   * What the policy in force would decide, and why, for a SQL text ({@code request} null) or a {@code method}
   * request's wire bytes, read in a fresh session of this pool's backend as profiled: {@code policy explain}
   * as this proxy would decide it. Decides nothing for a real call and changes no state.
   */
  public Explanation explain(
      String sql, String method, byte[] request, String principal, List<String> groups) {
    BackendProfile p = profiles.current();
    SessionView session = (p == null ? BackendProfile.UNKNOWN : p).freshSession();
    Facts facts =
        request == null
            ? inspector.inspectSql(sql, session)
            : inspector.inspect(method, request, session);
    return Explanation.of(
        engine, request == null ? "ExecutePlan" : method, principal, groups, facts);
  }

  public PolicyStore store() {
    return store;
  }

  @Override
  public void close() {
    scheduler.shutdownNow();
    stage.close();
  }
}
