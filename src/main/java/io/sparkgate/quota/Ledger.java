package io.sparkgate.quota;

import com.github.benmanes.caffeine.cache.Ticker;
import io.sparkgate.redis.RedisUnavailableException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The call path's side of the counts: tokens and slots taken and given back, in this replica's {@link
 * Accounts} and, with Redis, in {@link Shared}. The start of an ExecutePlan asks Redis (one round trip);
 * everything else is decided here and reaches Redis without waiting, or through {@link Upkeep}. While Redis
 * is away, every decision is this replica's alone.
 */
final class Ledger {
  private final Accounts accounts;
  private final Shared shared; // null: this replica counts alone
  private final Ticker ticker;
  private final long leaseNanos;
  private final LongAdder fallbacks = new LongAdder();

  Ledger(Accounts accounts, Shared shared, Ticker ticker, long leaseNanos) {
    this.accounts = accounts;
    this.shared = shared;
    this.ticker = ticker;
    this.leaseNanos = leaseNanos;
  }

  /** ExecutePlan starts decided by this replica alone because Redis was away. */
  long fallbacks() {
    return fallbacks.sum();
  }

  private boolean sharing() {
    return shared != null && shared.up();
  }

  /**
   * One token from the principal's bucket and one from its tenant's, or neither.
   *
   * @param tenant null when the principal has none
   * @param borrow the call continues or ends admitted work (see {@link Account#take})
   */
  void takeTokens(Budget b, String principal, String tenant, boolean borrow) throws QuotaExceeded {
    boolean p = b.principalRate() > 0;
    boolean t = tenant != null && b.tenantRate() > 0;
    if (!p && !t) return;
    long now = ticker.read();
    boolean report = sharing();
    if (p) {
      long wait =
          take(false, principal, b.principalRate(), b.principalBurst(), now, borrow, report);
      if (wait > 0) {
        throw new QuotaExceeded(Quota.PRINCIPAL_RATE, b.principalRate(), principal, wait, 0);
      }
    }
    if (t) {
      long wait = take(true, tenant, b.tenantRate(), b.tenantBurst(), now, borrow, report);
      if (wait > 0) {
        if (p) refund(false, principal, report);
        throw new QuotaExceeded(Quota.TENANT_RATE, b.tenantRate(), tenant, wait, 0);
      }
    }
  }

  /**
   * The start of an ExecutePlan: its tokens and its slots, all or nothing. With Redis this is the one round
   * trip a call may wait for.
   *
   * @param operation the client's operation id; empty when the server is to make one up (the slot is then
   *     this call's alone)
   * @return the operation holding the slots; null when no operation limit applies
   */
  Op start(Budget b, String principal, String tenant, String session, String operation)
      throws QuotaExceeded {
    boolean slots = b.countsOperations(tenant != null);
    boolean rated = b.principalRate() > 0 || (tenant != null && b.tenantRate() > 0);
    if (!slots && !rated) return null;
    String key =
        key(principal, session, operation.isEmpty() ? "proxy-" + UUID.randomUUID() : operation);
    if (shared != null) {
      if (shared.up()) {
        try {
          return startShared(b, principal, tenant, session, key, slots);
        } catch (RedisUnavailableException e) {
          shared.down(e);
        }
      }
      fallbacks.increment();
    }
    return startLocal(b, principal, tenant, session, key, slots);
  }

  private Op startShared(
      Budget b, String principal, String tenant, String session, String key, boolean slots)
      throws QuotaExceeded {
    Shared.Start r = shared.start(key, principal, tenant, b);
    long now = ticker.read();
    switch (r.refused()) {
      case 0 -> {}
      case 1 -> throw refusedRate(Quota.PRINCIPAL_RATE, r, principal);
      case 2 -> throw refusedRate(Quota.TENANT_RATE, r, tenant);
      case 3 -> throw refusedSlot(Quota.PRINCIPAL_OPERATIONS, r.limit(), principal);
      case 4 -> throw refusedSlot(Quota.TENANT_OPERATIONS, r.limit(), tenant);
      default -> throw new RedisUnavailableException("unknown quota answer " + r);
    }
    if (b.principalRate() > 0) {
      sharedLevel(false, principal, b.principalRate(), b.principalBurst(), r.principalLevel(), now);
    }
    if (tenant != null && b.tenantRate() > 0) {
      sharedLevel(true, tenant, b.tenantRate(), b.tenantBurst(), r.tenantLevel(), now);
    }
    // Redis counted it; the replica keeps it too, to renew it and to count it should Redis go away.
    return slots ? hold(b, principal, tenant, session, key, now, true, false) : null;
  }

  private Op startLocal(
      Budget b, String principal, String tenant, String session, String key, boolean slots)
      throws QuotaExceeded {
    takeTokens(b, principal, tenant, false);
    if (!slots) return null;
    try {
      return hold(b, principal, tenant, session, key, ticker.read(), false, true);
    } catch (QuotaExceeded e) {
      boolean report = sharing();
      if (b.principalRate() > 0) refund(false, principal, report);
      if (tenant != null && b.tenantRate() > 0) refund(true, tenant, report);
      throw e;
    }
  }

  /**
   * A ReattachExecute: the operation's lease is renewed; one this replica does not hold (started on another
   * replica, or before a restart) is taken over without a check, for it is running anyway.
   */
  Op reattach(Budget b, String principal, String tenant, String session, String operation) {
    if (!b.countsOperations(tenant != null) || operation.isEmpty()) return null;
    Op op = holdUnchecked(b, principal, tenant, session, key(principal, session, operation));
    if (sharing()) {
      var unused =
          shared
              .renewSoon(op)
              .thenRun(
                  () -> {
                    if (op.released()) {
                      shared.release(op.key, principal, tenant); // released while it was added
                    } else {
                      op.shared(true);
                    }
                  });
    }
    return op;
  }

  private Op holdUnchecked(Budget b, String principal, String tenant, String session, String key) {
    try {
      return hold(b, principal, tenant, session, key, ticker.read(), false, false);
    } catch (QuotaExceeded cannotHappen) {
      throw new IllegalStateException(cannotHappen); // no limit is checked
    }
  }

  /**
   * The operation of {@code key} gets this stream: an operation this replica holds already is renewed (a
   * retried ExecutePlan, a reattach), else a new one takes a slot in each account, checked against the
   * limits when {@code check}.
   */
  private Op hold(
      Budget b,
      String principal,
      String tenant,
      String session,
      String key,
      long now,
      boolean inRedis,
      boolean check)
      throws QuotaExceeded {
    boolean p = b.principalOperations() > 0;
    boolean t = tenant != null && b.tenantOperations() > 0;
    while (true) {
      Account pa = p ? accounts.live(false, principal) : null;
      Account ta = t ? accounts.live(true, tenant) : null;
      Op op = new Op(key, session, principal, tenant, pa, ta, now + leaseNanos, inRedis);
      Account first = pa != null ? pa : ta;
      synchronized (first) {
        if (first.retired()) continue;
        Op existing = first.op(key);
        if (existing != null && !existing.released()) {
          existing.attach(now + leaseNanos);
          return existing;
        }
        int limit = !check ? 0 : first == pa ? b.principalOperations() : b.tenantOperations();
        if (!first.hold(op, limit, now)) {
          throw refusedSlot(
              first == pa ? Quota.PRINCIPAL_OPERATIONS : Quota.TENANT_OPERATIONS,
              limit,
              first.name);
        }
      }
      if (pa != null && ta != null) {
        boolean retired;
        synchronized (ta) {
          retired = ta.retired();
          if (!retired && !ta.hold(op, check ? b.tenantOperations() : 0, now)) {
            drop(pa, op);
            throw refusedSlot(Quota.TENANT_OPERATIONS, b.tenantOperations(), tenant);
          }
        }
        if (retired) {
          drop(pa, op);
          continue;
        }
      }
      return op;
    }
  }

  /** A stream of the operation ended; {@code over}: so did the operation. */
  void streamEnded(Op op, boolean over) {
    op.detach(ticker.read() + leaseNanos);
    if (over) release(op);
  }

  /** The operation is over: its slots are given back, here and in Redis. */
  void release(Op op) {
    if (!op.release()) return;
    if (op.principal != null) drop(op.principal, op);
    if (op.tenant != null) drop(op.tenant, op);
    if (shared != null) shared.release(op.key, op.principalName, op.tenantName);
  }

  /** ReleaseExecute with release_all, or an Interrupt of one operation. */
  void releaseOperation(String principal, String tenant, String session, String operation) {
    if (operation.isEmpty()) return;
    String key = key(principal, session, operation);
    Op op = find(accounts.find(false, principal), key);
    if (op == null) op = find(accounts.find(true, tenant), key);
    if (op != null) {
      release(op);
    } else if (shared != null) {
      shared.release(key, principal, tenant); // held by another replica
    }
  }

  /** ReleaseSession, or an Interrupt of all of a session: every operation of the session is over. */
  void releaseSession(String principal, String tenant, String session) {
    String prefix = key(principal, session, "");
    for (Account a : new Account[] {accounts.find(false, principal), accounts.find(true, tenant)}) {
      if (a == null) continue;
      List<Op> ops;
      synchronized (a) {
        ops = a.ofSession(prefix);
      }
      ops.forEach(this::release);
    }
    if (shared != null) shared.releaseSession(prefix, principal, tenant);
  }

  /** Operations held on this replica, each once. */
  long held() {
    long now = ticker.read();
    long[] n = {0};
    accounts.forEach(
        a -> {
          a.held(now); // drops the expired
          n[0] += a.owned();
        });
    return n[0];
  }

  /** {@code principal/session/operation}: an operation's name here and in Redis. */
  private static String key(String principal, String session, String operation) {
    return principal + "/" + session + "/" + operation;
  }

  /** Takes a token from the live account of {@code name}; see {@link Account#take}. */
  private long take(
      boolean tenant, String name, int rate, int burst, long now, boolean borrow, boolean report) {
    while (true) {
      Account a = accounts.live(tenant, name);
      synchronized (a) {
        if (!a.retired()) return a.take(rate, burst, now, borrow, report);
      }
    }
  }

  private void refund(boolean tenant, String name, boolean report) {
    Account a = accounts.live(tenant, name);
    synchronized (a) {
      a.refund(report);
    }
  }

  private void sharedLevel(
      boolean tenant, String name, int rate, int burst, double level, long now) {
    while (true) {
      Account a = accounts.live(tenant, name);
      synchronized (a) {
        if (a.retired()) continue;
        a.sharedLevel(rate, burst, level, now);
        return;
      }
    }
  }

  private static Op find(Account a, String key) {
    if (a == null) return null;
    synchronized (a) {
      return a.op(key);
    }
  }

  private static void drop(Account a, Op op) {
    synchronized (a) {
      a.drop(op);
    }
  }

  private static QuotaExceeded refusedRate(Quota quota, Shared.Start r, String holder) {
    return new QuotaExceeded(
        quota, r.limit(), holder, TimeUnit.MILLISECONDS.toNanos(r.retryMillis()), 0);
  }

  private static QuotaExceeded refusedSlot(Quota quota, long limit, String holder) {
    return new QuotaExceeded(quota, limit, holder, QuotaExceeded.SLOT_RETRY_NANOS, 0);
  }
}
