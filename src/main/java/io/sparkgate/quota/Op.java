package io.sparkgate.quota;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One operation holding a slot on this replica: in its principal's account, its tenant's, or both. While a
 * stream of it (its ExecutePlan, a ReattachExecute) is open here it cannot expire and the replica renews its
 * lease; once none is, it lasts until its lease runs out unless a reattach renews it.
 */
final class Op {
  /** {@code principal/session/operation}: unique across principals, and the member in Redis's sets. */
  final String key;

  final String session;

  /** Whose it is: the principal, and its tenant (null without one), whether or not their accounts count it. */
  final String principalName;

  final String tenantName;

  /** The accounts whose slot it takes; null where that side has no operation limit. */
  final Account principal;

  final Account tenant;

  private final AtomicInteger streams = new AtomicInteger(1);
  private final AtomicBoolean released = new AtomicBoolean();
  private volatile long expiresAt;

  /** Whether Redis's sets hold it (false: taken while Redis was away, or learnt from a reattach). */
  private volatile boolean shared;

  Op(
      String key,
      String session,
      String principalName,
      String tenantName,
      Account principal,
      Account tenant,
      long expiresAt,
      boolean shared) {
    this.key = key;
    this.session = session;
    this.principalName = principalName;
    this.tenantName = tenantName;
    this.principal = principal;
    this.tenant = tenant;
    this.expiresAt = expiresAt;
    this.shared = shared;
  }

  /** Another stream of the operation opened here: a sign of life. */
  void attach(long expiresAt) {
    streams.incrementAndGet();
    this.expiresAt = expiresAt;
  }

  /** A stream ended; the lease counts from now. */
  void detach(long expiresAt) {
    this.expiresAt = expiresAt;
    streams.decrementAndGet();
  }

  boolean streaming() {
    return streams.get() > 0;
  }

  void renew(long expiresAt) {
    this.expiresAt = expiresAt;
  }

  boolean expired(long now) {
    return !streaming() && now - expiresAt >= 0;
  }

  /** Marks it released; true for the one caller that does, so that its slot is given back once. */
  boolean release() {
    return released.compareAndSet(false, true);
  }

  boolean released() {
    return released.get();
  }

  boolean shared() {
    return shared;
  }

  void shared(boolean shared) {
    this.shared = shared;
  }

  /** The account that speaks for it in a pass over every account (it may be in two). */
  Account owner() {
    return principal != null ? principal : tenant;
  }
}
