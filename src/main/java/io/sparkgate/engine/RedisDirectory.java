package io.sparkgate.engine;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.sparkgate.redis.Redis;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The directory shared by every replica: {@code sparkgate:engines:<pool>} maps each key to its engine's
 * record, changed only by compare-and-set (a script), so one replica owns each key's engine. Beside it, when
 * each engine was last used, the sessions placed on it, and each replica's heartbeat.
 *
 * <p>Engines' tokens are in the records: Redis is already where the replicas share what lets a caller act as
 * a session's owner, and must be protected as such (docs/engines.md).
 */
final class RedisDirectory implements EngineDirectory {
  private static final String CAS =
      "local cur = redis.call('HGET', KEYS[1], ARGV[1]) "
          + "if cur ~= ARGV[2] then return 0 end "
          + "if ARGV[3] == '' then redis.call('HDEL', KEYS[1], ARGV[1]) "
          + "else redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) end "
          + "return 1";

  private final Redis redis;

  RedisDirectory(Redis redis) {
    this.redis = redis;
  }

  private static String records(String pool) {
    return "sparkgate:engines:" + pool;
  }

  private static String usedKey(String pool) {
    return "sparkgate:engine-used:" + pool;
  }

  private static String sessionsKey(String pool, EngineKey key) {
    return "sparkgate:engine-sessions:" + pool + ":" + key.id();
  }

  @Override
  public Optional<EngineRecord> find(String pool, EngineKey key) {
    return Optional.ofNullable(
        EngineRecord.decode(redis.call(c -> c.hget(records(pool), key.id()))));
  }

  @Override
  public boolean claim(String pool, EngineKey key, EngineRecord record) {
    return redis.call(c -> c.hsetnx(records(pool), key.id(), record.encode()));
  }

  @Override
  public boolean replace(String pool, EngineKey key, EngineRecord expected, EngineRecord next) {
    Long done =
        redis.call(
            c ->
                c.eval(
                    CAS,
                    ScriptOutputType.INTEGER,
                    new String[] {records(pool)},
                    key.id(),
                    expected.encode(),
                    next == null ? "" : next.encode()));
    return done != null && done == 1L;
  }

  @Override
  public Map<String, EngineRecord> all(String pool) {
    Map<String, EngineRecord> out = new TreeMap<>();
    redis
        .call(c -> c.hgetall(records(pool)))
        .forEach(
            (k, v) -> {
              EngineRecord r = EngineRecord.decode(v);
              if (r != null) out.put(k, r);
            });
    return out;
  }

  @Override
  public void heartbeat(String replica, long ttlMillis) {
    redis.call(c -> c.set("sparkgate:replica:" + replica, "1", SetArgs.Builder.px(ttlMillis)));
  }

  @Override
  public boolean alive(String replica) {
    Long n = redis.call(c -> c.exists("sparkgate:replica:" + replica));
    return n != null && n > 0;
  }

  @Override
  public void used(String pool, EngineKey key, long millis) {
    redis.send(c -> c.hset(usedKey(pool), key.id(), Long.toString(millis)));
  }

  @Override
  public long lastUsed(String pool, EngineKey key) {
    String v = redis.call(c -> c.hget(usedKey(pool), key.id()));
    try {
      return v == null ? 0 : Long.parseLong(v);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  @Override
  public void session(String pool, EngineKey key, String userId, String sessionId) {
    redis.send(c -> c.sadd(sessionsKey(pool, key), userId + "\n" + sessionId));
  }

  @Override
  public List<String[]> sessions(String pool, EngineKey key) {
    List<String[]> out = new ArrayList<>();
    for (String s : redis.call(c -> c.smembers(sessionsKey(pool, key)))) {
      int nl = s.indexOf('\n');
      if (nl > 0) out.add(new String[] {s.substring(0, nl), s.substring(nl + 1)});
    }
    return out;
  }

  @Override
  public void forget(String pool, EngineKey key) {
    redis.call(c -> c.del(sessionsKey(pool, key)));
    redis.call(c -> c.hdel(usedKey(pool), key.id()));
  }
}
