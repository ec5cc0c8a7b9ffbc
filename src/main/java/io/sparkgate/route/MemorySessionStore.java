package io.sparkgate.route;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Duration;
import java.util.Optional;

/** Placements of one replica, in its memory; forgotten after the idle timeout. */
final class MemorySessionStore implements SessionStore {
  private final Cache<SessionKey, Placement> placements;

  MemorySessionStore(Duration idleTimeout, Ticker ticker) {
    this.placements = Caffeine.newBuilder().expireAfterAccess(idleTimeout).ticker(ticker).build();
  }

  @Override
  public Optional<Placement> find(SessionKey key) {
    return Optional.ofNullable(placements.getIfPresent(key));
  }

  @Override
  public Placement place(SessionKey key, Placement placement) {
    Placement first = placements.asMap().putIfAbsent(key, placement);
    return first != null ? first : placement;
  }

  @Override
  public void touch(SessionKey key) {
    // Reading is what restarts an entry's expire-after-access timer.
    Placement unused = placements.getIfPresent(key);
  }

  @Override
  public void forget(SessionKey key) {
    placements.invalidate(key);
  }

  @Override
  public void close() {}
}
