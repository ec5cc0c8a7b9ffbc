package io.sparkgate.revoke;

import io.sparkgate.redis.Redis;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Revocations in the Redis the replicas share: one hash, one field per principal or token, and a counter
 * each write increments. A field that cannot be read (written by a newer proxy, say) is skipped and logged.
 */
final class RedisStore implements RevocationStore {
  private static final Logger log = LoggerFactory.getLogger(RedisStore.class);
  static final String HASH = "sparkgate:revocations";
  static final String VERSION = "sparkgate:revocations:version";

  private final Redis redis;

  RedisStore(Redis redis) {
    this.redis = redis;
  }

  @Override
  public Snapshot load() {
    long version = version();
    Map<String, Revocation> all = new LinkedHashMap<>();
    redis
        .call(c -> c.hgetall(HASH))
        .forEach(
            (id, json) -> {
              try {
                all.put(id, Revocation.fromJson(json));
              } catch (IllegalArgumentException e) {
                log.warn("skipping revocation {} in Redis: {}", id, e.getMessage());
              }
            });
    return new Snapshot(version, all);
  }

  @Override
  public long version() {
    String v = redis.call(c -> c.get(VERSION));
    return v == null ? 0 : Long.parseLong(v);
  }

  @Override
  public void put(Revocation r) {
    redis.call(c -> c.hset(HASH, r.id(), r.toJson()));
    redis.call(c -> c.incr(VERSION));
  }

  @Override
  public boolean remove(String id) {
    boolean removed = redis.call(c -> c.hdel(HASH, id)) > 0;
    if (removed) redis.call(c -> c.incr(VERSION));
    return removed;
  }
}
