package io.sparkgate.quota;

import com.github.benmanes.caffeine.cache.Ticker;
import io.sparkgate.redis.RedisUnavailableException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The background work, on one thread, every sync interval: leases renewed (every third of a lease), the
 * buckets reported to Redis and read back, Redis tried again after a failure (and told again what this
 * replica holds), idle accounts dropped. Nothing here is on a call's path.
 */
final class Upkeep {
  private static final Logger log = LoggerFactory.getLogger(Upkeep.class);

  /** An account unused this long, holding nothing and with a full bucket, is dropped. */
  static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(30);

  /**
   * A bucket used here within this long is read back from Redis at every tick; one idle longer starts from
   * this replica's own view (at most a full bucket) when next used.
   */
  static final long ACTIVE_NANOS = TimeUnit.SECONDS.toNanos(5);

  private static final long SWEEP_NANOS = TimeUnit.SECONDS.toNanos(10);

  private final Accounts accounts;
  private final Shared shared; // null: nothing to share
  private final Ticker ticker;
  private final long leaseNanos;

  private String epoch; // Redis's, as last seen
  private boolean loaded; // the scripts, into this Redis
  private long nextRenewal;
  private long nextSweep;

  Upkeep(Accounts accounts, Shared shared, Ticker ticker, long leaseNanos) {
    this.accounts = accounts;
    this.shared = shared;
    this.ticker = ticker;
    this.leaseNanos = leaseNanos;
    long now = ticker.read();
    this.nextRenewal = now;
    this.nextSweep = now + SWEEP_NANOS;
  }

  void tick() {
    long now = ticker.read();
    boolean renewDue = now - nextRenewal >= 0;
    boolean probe = shared != null && !shared.up();
    if (probe) {
      // Redis counts nothing taken while it was away, and may have lost the rest: register it all.
      accounts.forEach(Upkeep::unshare);
    }
    if (renewDue || probe) {
      if (renewDue) nextRenewal = now + leaseNanos / 3;
      List<Op> renew = new ArrayList<>();
      accounts.forEach(a -> a.renew(now, now + leaseNanos, renew));
      if (shared != null) renewShared(renew, probe);
    }
    if (shared != null && shared.up()) {
      sync(now);
    }
    if (now - nextSweep >= 0) {
      nextSweep = now + SWEEP_NANOS;
      accounts.sweep(now, IDLE_NANOS);
    }
  }

  /** Renews in Redis; after a failure this is what finds Redis back. */
  private void renewShared(List<Op> renew, boolean comingBack) {
    try {
      if (!loaded || comingBack) {
        shared.load();
        loaded = true;
      }
      String now = shared.renew(renew);
      for (Op op : renew) {
        if (op.released()) {
          shared.release(op.key, op.principalName, op.tenantName); // released while added
        } else {
          op.shared(true);
        }
      }
      // Coming back, everything held was just added again: a new epoch is no news then.
      if (!comingBack && epoch != null && !epoch.equals(now)) {
        // Redis lost its data since the last renewal (it restarted): register everything again.
        log.warn(
            "Redis lost the shared quota counts (restarted?); registering this replica's again");
        loaded = false;
        nextRenewal = ticker.read();
        accounts.forEach(Upkeep::unshare);
      }
      epoch = now;
      if (comingBack) {
        // What was admitted while Redis was away is not reported: each replica enforced it alone.
        accounts.forEach(Account::unshare);
        shared.back();
      }
    } catch (RedisUnavailableException e) {
      shared.down(e);
    }
  }

  /** Marks every operation of {@code a} as one Redis must be told of. */
  private static void unshare(Account a) {
    for (Op op : a.ops()) op.shared(false);
  }

  /** Reports what was admitted here since the last tick and reads the buckets in use back from Redis. */
  private void sync(long now) {
    List<Account> batch = new ArrayList<>();
    for (Account a : accounts.all()) {
      synchronized (a) {
        if (!a.rated(now, ACTIVE_NANOS)) continue;
      }
      batch.add(a);
      if (batch.size() == Shared.BATCH) {
        if (!syncBatch(batch)) return;
        batch.clear();
      }
    }
    if (!batch.isEmpty()) syncBatch(batch);
  }

  private boolean syncBatch(List<Account> batch) {
    int n = batch.size();
    String[] keys = new String[n];
    long[] used = new long[n];
    int[] rates = new int[n];
    int[] bursts = new int[n];
    for (int i = 0; i < n; i++) {
      Account a = batch.get(i);
      keys[i] = Shared.bucketKey(a.tenant, a.name);
      synchronized (a) {
        used[i] = a.beginSync();
        rates[i] = a.rate();
        bursts[i] = a.burst();
      }
    }
    try {
      double[] levels = shared.sync(keys, used, rates, bursts);
      long now = ticker.read();
      for (int i = 0; i < n; i++) {
        Account a = batch.get(i);
        synchronized (a) {
          a.synced(levels[i], now);
        }
      }
      return true;
    } catch (RedisUnavailableException e) {
      for (Account a : batch) {
        synchronized (a) {
          a.syncFailed();
        }
      }
      shared.down(e);
      return false;
    }
  }
}
