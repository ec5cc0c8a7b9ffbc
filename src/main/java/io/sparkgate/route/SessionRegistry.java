package io.sparkgate.route;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Duration;
import java.util.Optional;

/**
 * Placements as this replica knows them: a local cache in front of the {@link SessionStore}, so a session
 * this replica has seen is routed without asking the store. The store hears that a session is still in use
 * at most every {@link #touchEvery} per session, so its idle timer stays right without a store write per call.
 */
final class SessionRegistry implements AutoCloseable {
  private static final class Known {
    final Placement placement;
    volatile long storeTouchedAt;

    Known(Placement placement, long now) {
      this.placement = placement;
      this.storeTouchedAt = now;
    }
  }

  private final SessionStore store;
  private final boolean shared;
  private final Cache<SessionKey, Known> local;
  private final Ticker ticker;
  private final long touchEvery;

  /**
   * @param shared whether other replicas share the store (a lookup may then wait on it)
   */
  SessionRegistry(SessionStore store, boolean shared, Duration idleTimeout, Ticker ticker) {
    this.store = store;
    this.shared = shared;
    this.ticker = ticker;
    this.touchEvery = idleTimeout.toNanos() / 10;
    this.local = Caffeine.newBuilder().expireAfterAccess(idleTimeout).ticker(ticker).build();
  }

  /** Whether finding {@code key} may wait on a shared store (it is not in the local cache). */
  boolean mayBlock(SessionKey key) {
    return shared && local.getIfPresent(key) == null;
  }

  /**
   * Where {@code key} lives, from the local cache or the store; empty when it was never placed. Marks it used.
   *
   * @throws io.sparkgate.redis.RedisUnavailableException when only the store could say, and cannot
   */
  Optional<Placement> find(SessionKey key) {
    Known known = local.getIfPresent(key);
    if (known != null) {
      long now = ticker.read();
      if (now - known.storeTouchedAt >= touchEvery) {
        known.storeTouchedAt = now;
        store.touch(key);
      }
      return Optional.of(known.placement);
    }
    if (!shared) return Optional.empty();
    Optional<Placement> found = store.find(key);
    found.ifPresent(p -> local.put(key, new Known(p, ticker.read())));
    return found;
  }

  /**
   * Records that {@code key} lives at {@code placement}, unless another replica placed it first: the
   * placement in force is returned and cached.
   *
   * @throws io.sparkgate.redis.RedisUnavailableException when the shared store cannot record it
   */
  Placement place(SessionKey key, Placement placement) {
    Placement winner = store.place(key, placement);
    local.put(key, new Known(winner, ticker.read()));
    return winner;
  }

  /** The session was released: forget it here and in the store. */
  void forget(SessionKey key) {
    local.invalidate(key);
    store.forget(key);
  }

  /** Placements this replica has cached. */
  long cached() {
    return local.estimatedSize();
  }

  @Override
  public void close() {
    store.close();
  }
}
