package io.sparkgate.quota;

import com.github.benmanes.caffeine.cache.Ticker;
import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.call.Stage;
import io.sparkgate.config.QuotasConfig;
import io.sparkgate.forward.CallHook;
import io.sparkgate.redis.Redis;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The quota stage: each principal's and each tenant's requests a second, request size and concurrent
 * operations, as {@code quotas:} sets them (docs/quotas.md). Place it after the decide stage, so that refused
 * requests never count. A call over a quota is refused with {@code RESOURCE_EXHAUSTED} in Spark's error
 * shape ({@code SPARKGATE_QUOTA_EXCEEDED}), and the audit record names the quota. With Redis, counts are
 * shared by every replica; without it, or while it is away, each replica counts alone. {@link #close} stops
 * the background thread and gives nothing back: what this replica held runs out its lease, as after a crash.
 */
public final class QuotaStage implements Stage, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(QuotaStage.class);

  /** How often this replica reports its calls to Redis and reads the others' back (the rate's lag). */
  static final Duration SYNC_INTERVAL = Duration.ofMillis(250);

  private final Rules rules;
  private final Ledger ledger;
  private final Upkeep upkeep;
  private final Shared shared; // null without Redis
  private final EnumMap<Quota, LongAdder> refusals = new EnumMap<>(Quota.class);
  private final ScheduledExecutorService background; // null: ticked by hand (tests)

  private QuotaStage(
      QuotasConfig config,
      Optional<Redis> redis,
      Ticker ticker,
      ScheduledExecutorService background) {
    long lease = config.operationLease().toNanos();
    Accounts accounts = new Accounts();
    this.rules = new Rules(config);
    this.shared = redis.map(r -> new Shared(r, config.operationLease().toMillis())).orElse(null);
    this.ledger = new Ledger(accounts, shared, ticker, lease);
    this.upkeep = new Upkeep(accounts, shared, ticker, lease);
    this.background = background;
    for (Quota q : Quota.values()) refusals.put(q, new LongAdder());
  }

  /** The stage for {@code config}, sharing counts through {@code shared} when present. */
  public static QuotaStage create(QuotasConfig config, Optional<Redis> shared) {
    return create(config, shared, Ticker.systemTicker());
  }

  /** As above, with time read from {@code ticker}. */
  public static QuotaStage create(QuotasConfig config, Optional<Redis> shared, Ticker ticker) {
    return create(config, shared, ticker, SYNC_INTERVAL);
  }

  static QuotaStage create(
      QuotasConfig config, Optional<Redis> shared, Ticker ticker, Duration syncInterval) {
    if (!new Rules(config).limitsAnyone()) {
      return unscheduled(config, shared, ticker); // nothing to count, nothing to run
    }
    ScheduledExecutorService background =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "sparkgate-quota");
              t.setDaemon(true);
              return t;
            });
    QuotaStage stage = new QuotaStage(config, shared, ticker, background);
    // A tick that throws is logged by tick() itself: the schedule must never stop.
    var unused =
        background.scheduleWithFixedDelay(
            stage::tick, 0, syncInterval.toNanos(), TimeUnit.NANOSECONDS);
    return stage;
  }

  /** A stage whose background work runs only when a test calls {@link #tick}. */
  static QuotaStage unscheduled(QuotasConfig config, Optional<Redis> shared, Ticker ticker) {
    return new QuotaStage(config, shared, ticker, null);
  }

  @Override
  public CallHook open(Call call) {
    if (!rules.limitsAnyone()) return CallHook.PASS_THROUGH;
    Principal principal = call.principal();
    if (principal == null) return CallHook.PASS_THROUGH; // refused by authentication
    Budget budget = rules.budget(principal, call);
    String tenant = principal.tenant().orElse(null);
    if (!budget.limitsPrincipal() && (tenant == null || !budget.limitsTenant())) {
      return CallHook.PASS_THROUGH;
    }
    return new CallQuota(call, budget, principal.name(), tenant, ledger, refusals);
  }

  /** Calls refused, by quota ({@code per_principal.concurrent_operations} ...), every quota from the start. */
  public Map<String, Long> refusals() {
    Map<String, Long> out = new LinkedHashMap<>();
    refusals.forEach((q, n) -> out.put(q.label(), n.sum()));
    return out;
  }

  /** Operations holding a slot on this replica now (with Redis, those started or reattached here). */
  public long heldOperations() {
    return ledger.held();
  }

  /** Whether the counts are shared through Redis now: false without Redis, and while it is away. */
  public boolean shared() {
    return shared != null && shared.up();
  }

  /** ExecutePlan starts this replica decided alone because Redis was away. */
  public long localFallbacks() {
    return ledger.fallbacks();
  }

  /** The background work once: renewals, the rate's sync with Redis, finding Redis back, cleanup. */
  void tick() {
    try {
      upkeep.tick();
    } catch (RuntimeException e) {
      log.error("quota background work failed; trying again at the next tick", e);
    }
  }

  /** Stops the background work. Slots held here are not given back: they run out their lease. */
  @Override
  public void close() {
    if (background != null) {
      background.shutdownNow();
    }
  }
}
