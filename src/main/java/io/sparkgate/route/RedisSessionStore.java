package io.sparkgate.route;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.sparkgate.redis.Redis;
import io.sparkgate.redis.RedisUnavailableException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Placements shared by every replica through Redis: one string key per session ({@link
 * SessionKey#storeKey()}) holding {@link Placement#encode()}, expiring after the idle timeout unless touched.
 * The first replica to SET a key (NX) wins, and every other one reads the winner, so all agree without locks.
 * It does not own the {@link Redis} connection (the shared quotas use it too).
 */
final class RedisSessionStore implements SessionStore {
  private static final Logger log = LoggerFactory.getLogger(RedisSessionStore.class);

  /**
   * Deletes the key only while it still holds the unreadable value seen: a plain DEL could delete a placement
   * another replica has just written in its place, and the two would then disagree.
   */
  private static final String DELETE_IF_UNCHANGED =
      "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

  private final Redis redis;
  private final long idleMillis;
  private final AtomicBoolean undecodableLogged = new AtomicBoolean();

  RedisSessionStore(Redis redis, Duration idleTimeout) {
    this.redis = Objects.requireNonNull(redis, "redis");
    this.idleMillis = Objects.requireNonNull(idleTimeout, "idleTimeout").toMillis();
    if (idleMillis <= 0) {
      throw new IllegalArgumentException("idle timeout must be at least 1 ms, got " + idleTimeout);
    }
  }

  @Override
  public Optional<Placement> find(SessionKey key) {
    String k = key.storeKey();
    return Optional.ofNullable(decode(k, redis.call(c -> c.get(k))));
  }

  @Override
  public Placement place(SessionKey key, Placement placement) {
    String k = key.storeKey();
    String mine = placement.encode();
    SetArgs nxIdle = SetArgs.Builder.nx().px(idleMillis);
    // Twice at most: the winner may vanish between our SET and our GET, or be unreadable.
    for (int attempt = 0; attempt < 2; attempt++) {
      if ("OK".equals(redis.call(c -> c.set(k, mine, nxIdle)))) return placement;
      String held = redis.call(c -> c.get(k));
      Placement winner = decode(k, held);
      if (winner != null) return winner;
      if (held != null) {
        redis.call(
            c -> c.eval(DELETE_IF_UNCHANGED, ScriptOutputType.INTEGER, new String[] {k}, held));
      }
    }
    // Reached only if the key vanished twice in a row; answering ours could split the replicas.
    throw new RedisUnavailableException("no placement settled in Redis for " + k);
  }

  @Override
  public void touch(SessionKey key) {
    String k = key.storeKey();
    // Counted by Redis when it fails; a session touched again soon is not worth waiting for.
    CompletableFuture<Boolean> unused = redis.send(c -> c.pexpire(k, idleMillis));
  }

  @Override
  public void forget(SessionKey key) {
    String k = key.storeKey();
    // Should it fail, the placement expires after the idle timeout anyway.
    CompletableFuture<Long> unused = redis.send(c -> c.del(k));
  }

  /** Nothing to release: the connection belongs to whoever made it. */
  @Override
  public void close() {}

  /** The placement in {@code value}; null for none, and for one this version cannot read (logged once). */
  private Placement decode(String key, String value) {
    Placement p = Placement.decode(value);
    if (p == null && value != null && undecodableLogged.compareAndSet(false, true)) {
      log.warn(
          "Redis key {} holds '{}', which is not a placement: treated as absent (logged once)",
          key,
          value.length() > 100 ? value.substring(0, 100) + "..." : value);
    }
    return p;
  }
}
