package io.sparkgate.route;

import java.util.Optional;

/**
 * Where each session was placed: {@link MemorySessionStore} for one replica, {@link RedisSessionStore} for
 * replicas that share placements. Methods may block for at most the store's timeout; the {@link
 * SessionRegistry} in front of it keeps what this replica has seen, so ordinary calls never reach it.
 */
interface SessionStore extends AutoCloseable {
  /**
   * The placement of {@code key}, if it was placed and not forgotten (idle longer than the idle timeout).
   *
   * @throws io.sparkgate.redis.RedisUnavailableException when the store cannot answer
   */
  Optional<Placement> find(SessionKey key);

  /**
   * Records {@code placement} for {@code key} unless the key is placed already (another replica may have
   * placed it a moment ago); returns the placement in force, which every replica then agrees on.
   *
   * @throws io.sparkgate.redis.RedisUnavailableException when the store cannot answer
   */
  Placement place(SessionKey key, Placement placement);

  /** The session was used: its idle timer starts again. Never blocks; a failure is only counted. */
  void touch(SessionKey key);

  /** The session was released: forget its placement. Never blocks. */
  void forget(SessionKey key);

  @Override
  void close();
}
