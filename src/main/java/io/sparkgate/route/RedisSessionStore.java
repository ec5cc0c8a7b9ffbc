package io.sparkgate.route;

import io.sparkgate.redis.Redis;
import java.time.Duration;
import java.util.Optional;

/** Placeholder until the Redis-backed store lands: every operation fails as if Redis were down. */
final class RedisSessionStore implements SessionStore {
  private final Redis redis;

  RedisSessionStore(Redis redis, Duration idleTimeout) {
    this.redis = redis;
  }

  @Override
  public Optional<Placement> find(SessionKey key) {
    return Optional.ofNullable(Placement.decode(redis.call(c -> c.get(key.storeKey()))));
  }

  @Override
  public Placement place(SessionKey key, Placement placement) {
    throw new io.sparkgate.redis.RedisUnavailableException("not implemented yet");
  }

  @Override
  public void touch(SessionKey key) {}

  @Override
  public void forget(SessionKey key) {}

  @Override
  public long size() {
    return -1;
  }

  @Override
  public void close() {}
}
