package io.sparkgate.quota;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * One principal's or one tenant's counts on this replica: a token bucket and the operations it holds. Each
 * account is guarded by its own monitor, so principals never wait on one another; callers hold it for every
 * method here. An idle account is retired and dropped from its map; a caller that finds it retired takes a
 * fresh one.
 */
final class Account {
  private static final double NANOS_PER_SECOND = 1e9;

  final String name;

  /** A tenant's account (else a principal's). */
  final boolean tenant;

  private boolean started;
  private double tokens;
  private long refilledAt;
  private long lastUsed;
  private int rate;
  private int burst;

  /** Calls admitted here that the shared bucket has not been told of; those in the report under way. */
  private long unsynced;

  private long inFlight;

  private final Map<String, Op> ops = new HashMap<>(4);
  private boolean retired;

  private Account(String name, boolean tenant) {
    this.name = name;
    this.tenant = tenant;
  }

  static Account principal(String name) {
    return new Account(name, false);
  }

  static Account tenant(String name) {
    return new Account(name, true);
  }

  boolean retired() {
    return retired;
  }

  /**
   * Takes one token from the bucket. A call that only continues or ends admitted work may {@code borrow}: it
   * is let through while the bucket is less than one burst in debt, so that a client at its rate can still
   * end what it started.
   *
   * @param shared whether the take is to be reported to the shared bucket
   * @return 0 when taken, else the nanoseconds until a token will be there
   */
  long take(int rate, int burst, long now, boolean borrow, boolean shared) {
    refill(rate, burst, now);
    lastUsed = now;
    double floor = borrow ? 1 - burst : 1;
    if (tokens >= floor) {
      tokens -= 1;
      if (shared) unsynced++;
      return 0;
    }
    return Math.max(1, (long) Math.ceil((floor - tokens) * NANOS_PER_SECOND / rate));
  }

  /** Gives back a token taken for a call that was then refused by another limit. */
  void refund(boolean shared) {
    tokens += 1;
    if (shared && unsynced > 0) unsynced--;
  }

  /** The shared bucket's level just after Redis took this replica's token from it (ExecutePlan). */
  void sharedLevel(int rate, int burst, double level, long now) {
    refill(rate, burst, now);
    lastUsed = now;
    tokens = level - unsynced - inFlight;
  }

  /** How many admitted calls to report; they are in flight until {@link #synced} or {@link #syncFailed}. */
  long beginSync() {
    inFlight += unsynced;
    unsynced = 0;
    return inFlight;
  }

  /** The shared bucket's level after it took the report: this replica's view, less what came since. */
  void synced(double level, long now) {
    inFlight = 0;
    started = true;
    tokens = Math.min(burst, level) - unsynced;
    refilledAt = now;
  }

  /** The report was lost with Redis: what it held is forgotten, not double counted later. */
  void syncFailed() {
    inFlight = 0;
  }

  /** Stops reporting: Redis is away and each replica counts alone. */
  void unshare() {
    unsynced = 0;
  }

  int rate() {
    return rate;
  }

  int burst() {
    return burst;
  }

  /** Whether this account has a bucket whose level is worth reporting or refreshing. */
  boolean rated(long now, long activeNanos) {
    return rate > 0 && (unsynced > 0 || now - lastUsed < activeNanos);
  }

  private void refill(int rate, int burst, long now) {
    if (!started) {
      started = true;
      tokens = burst;
    } else if (now - refilledAt > 0) {
      tokens = Math.min(burst, tokens + (now - refilledAt) * (double) rate / NANOS_PER_SECOND);
    } else {
      tokens = Math.min(burst, tokens);
    }
    refilledAt = now;
    this.rate = rate;
    this.burst = burst;
  }

  /** The operation of this key, or null. */
  Op op(String key) {
    return ops.get(key);
  }

  /**
   * Takes a slot for {@code op} if fewer than {@code limit} live operations hold one (no check when limit is
   * 0); the expired ones are dropped first.
   */
  boolean hold(Op op, int limit, long now) {
    if (limit > 0) {
      purge(now);
      if (ops.size() >= limit) return false;
    }
    ops.put(op.key, op);
    lastUsed = now;
    return true;
  }

  void drop(Op op) {
    ops.remove(op.key, op);
  }

  /** Live operations. */
  int held(long now) {
    purge(now);
    return ops.size();
  }

  /** The operations of one session (its ReleaseSession, an Interrupt of all of it). */
  List<Op> ofSession(String prefix) {
    List<Op> out = new ArrayList<>();
    for (Op op : ops.values()) {
      if (op.key.startsWith(prefix)) out.add(op);
    }
    return out;
  }

  /**
   * Renews the lease of every operation with a stream open here and drops the expired ones; collects those
   * this account speaks for that Redis is to renew or to learn of.
   */
  void renew(long now, long expiresAt, List<Op> toShare) {
    for (Iterator<Op> it = ops.values().iterator(); it.hasNext(); ) {
      Op op = it.next();
      if (op.streaming()) {
        op.renew(expiresAt);
      } else if (op.expired(now)) {
        it.remove();
        continue;
      } else if (op.shared()) {
        continue; // Redis holds it, and it is left to run out its lease
      }
      if (op.owner() == this) toShare.add(op);
    }
  }

  /** Every operation this account speaks for (for counting them once). */
  int owned() {
    int n = 0;
    for (Op op : ops.values()) {
      if (op.owner() == this) n++;
    }
    return n;
  }

  /** Nothing held, nothing to report, unused for a while and its bucket full again: it can go. */
  boolean idle(long now, long idleNanos) {
    if (!ops.isEmpty() || unsynced > 0 || inFlight > 0 || now - lastUsed < idleNanos) {
      return false;
    }
    return !started
        || rate == 0
        || tokens + (now - refilledAt) * (double) rate / NANOS_PER_SECOND >= burst;
  }

  void retire() {
    retired = true;
  }

  /** All operations, to mark them for registering again after Redis lost them. */
  Iterable<Op> ops() {
    return ops.values();
  }

  private void purge(long now) {
    ops.values().removeIf(op -> op.expired(now));
  }
}
