package io.sparkgate.inspect;

import io.lettuce.core.ScriptOutputType;
import io.sparkgate.redis.Redis;
import io.sparkgate.redis.RedisUnavailableException;
import io.sparkgate.redis.Script;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * {@link SessionStates} in Redis, for the replicas of one pool: a string key per session (expiring {@code
 * idle} after its last call), one hash of cache entries per pool and a counter of their changes. Each change
 * is one Lua script, so two replicas never both claim an entry or lose each other's change to a session.
 * It does not own the {@link Redis} connection.
 */
public final class RedisSessionStates implements SessionStates {
  /** KEYS: session, cache version. ARGV: idle ms. Returns {state or '', version}. */
  private static final Script READ =
      new Script(
          """
          local v = redis.call('GET', KEYS[1])
          if v then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
          return {v or '', redis.call('GET', KEYS[2]) or '0'}
          """);

  /** KEYS: session. ARGV: the state expected ('' none), the new one ('' none), idle ms. Returns 1 if set. */
  private static final Script UPDATE =
      new Script(
          """
          if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
          if ARGV[2] == '' then redis.call('DEL', KEYS[1])
          else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
          return 1
          """);

  /** KEYS: entries, cache version. Returns {version, {key, entry, ...}}. */
  private static final Script ENTRIES =
      new Script(
          """
          return {redis.call('GET', KEYS[2]) or '0', redis.call('HGETALL', KEYS[1])}
          """);

  /** KEYS: entries, cache version. ARGV: key, entry, most entries. Returns 1 if recorded. */
  private static final Script CLAIM =
      new Script(
          """
          if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
          if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
          redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
          redis.call('INCR', KEYS[2])
          return 1
          """);

  /** KEYS: entries, cache version. ARGV: key, entry expected, new entry ('' removes). Returns 1 if done. */
  private static final Script REPLACE =
      new Script(
          """
          if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
          if ARGV[3] == '' then redis.call('HDEL', KEYS[1], ARGV[1])
          else redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) end
          redis.call('INCR', KEYS[2])
          return 1
          """);

  /**
   * Rounds of read and compare-and-set before giving up on a session changed that often meanwhile: with the
   * back-off between them, some 60 ms of contention.
   */
  private static final int UPDATE_ATTEMPTS = 48;

  private final Redis redis;
  private final String prefix;
  private final String idleMillis;

  /**
   * @param pool the pool whose replicas share these states: Spark's cache is its backends', not another's
   * @param idle how long a session's state is kept after its last call
   */
  public RedisSessionStates(Redis redis, String pool, Duration idle) {
    this.redis = Objects.requireNonNull(redis, "redis");
    if (idle.toMillis() <= 0) throw new IllegalArgumentException("idle must be positive: " + idle);
    this.prefix = "sparkgate:state:" + pool.length() + ":" + pool + ":";
    this.idleMillis = Long.toString(idle.toMillis());
  }

  @Override
  public Read read(String userId, String sessionId) {
    List<Object> r =
        call(
            c ->
                READ.run(
                    c,
                    ScriptOutputType.MULTI,
                    new String[] {sessionKey(userId, sessionId), versionKey()},
                    idleMillis));
    String state = string(r, 0);
    return new Read(state.isEmpty() ? Optional.empty() : Optional.of(state), number(r, 1));
  }

  @Override
  public String update(String userId, String sessionId, UnaryOperator<String> change) {
    String key = sessionKey(userId, sessionId);
    for (int attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      String before = call(c -> c.get(key));
      String after = change.apply(before);
      long set =
          call(
              c ->
                  UPDATE.run(
                      c,
                      ScriptOutputType.INTEGER,
                      new String[] {key},
                      before == null ? "" : before,
                      after == null ? "" : after,
                      idleMillis));
      if (set == 1) return after;
      // Another replica changed it meanwhile (one client changing its session from several
      // threads):
      // back off a little, more each time, so that the writers do not keep colliding.
      java.util.concurrent.locks.LockSupport.parkNanos(
          java.util.concurrent.ThreadLocalRandom.current().nextLong(50_000L * (attempt + 1)));
    }
    throw new Unavailable("session state of " + key + " changed too often to update it", null);
  }

  @Override
  public Entries entries() {
    List<Object> r =
        call(
            c -> ENTRIES.run(c, ScriptOutputType.MULTI, new String[] {entriesKey(), versionKey()}));
    Map<String, String> entries = new HashMap<>();
    if (!(r.size() > 1 && r.get(1) instanceof List<?> flat)) throw unexpected(r);
    for (int i = 0; i + 1 < flat.size(); i += 2)
      entries.put(String.valueOf(flat.get(i)), String.valueOf(flat.get(i + 1)));
    return new Entries(number(r, 0), entries);
  }

  @Override
  public boolean claim(String key, String entry) {
    long done =
        call(
            c ->
                CLAIM.run(
                    c,
                    ScriptOutputType.INTEGER,
                    new String[] {entriesKey(), versionKey()},
                    key,
                    entry,
                    Integer.toString(CacheOwners.MAX_ENTRIES)));
    return done == 1;
  }

  @Override
  public boolean replace(String key, String expected, String entry) {
    long done =
        call(
            c ->
                REPLACE.run(
                    c,
                    ScriptOutputType.INTEGER,
                    new String[] {entriesKey(), versionKey()},
                    key,
                    expected,
                    entry == null ? "" : entry));
    return done == 1;
  }

  private String sessionKey(String userId, String sessionId) {
    return prefix + "session:" + userId.length() + ":" + userId + ":" + sessionId;
  }

  private String entriesKey() {
    return prefix + "cache";
  }

  private String versionKey() {
    return prefix + "cache-version";
  }

  private <T> T call(
      Function<
              io.lettuce.core.api.async.RedisAsyncCommands<String, String>,
              java.util.concurrent.CompletionStage<T>>
          command) {
    try {
      return redis.call(command);
    } catch (RedisUnavailableException e) {
      throw new Unavailable(e.getMessage(), e);
    }
  }

  private static String string(List<Object> reply, int i) {
    if (reply == null || reply.size() <= i || reply.get(i) == null) throw unexpected(reply);
    return String.valueOf(reply.get(i));
  }

  private static long number(List<Object> reply, int i) {
    try {
      return Long.parseLong(string(reply, i));
    } catch (NumberFormatException e) {
      throw unexpected(reply);
    }
  }

  private static Unavailable unexpected(Object reply) {
    return new Unavailable("Redis answered a session state script unexpectedly: " + reply, null);
  }
}
