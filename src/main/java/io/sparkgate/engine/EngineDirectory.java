package io.sparkgate.engine;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where the replicas agree on one engine per key: in this replica's memory without Redis (one replica), in
 * Redis with {@code sessions.store: redis}. Records change only by compare-and-set, so two replicas never
 * both own a key's engine.
 */
interface EngineDirectory {
  Optional<EngineRecord> find(String pool, EngineKey key);

  /** Records {@code record} for {@code key} if it has none; whether it did. */
  boolean claim(String pool, EngineKey key, EngineRecord record);

  /** Replaces {@code expected} by {@code next} (null: removes it) if {@code key} still has {@code expected}. */
  boolean replace(String pool, EngineKey key, EngineRecord expected, EngineRecord next);

  /** Every engine of {@code pool}, by key id. */
  Map<String, EngineRecord> all(String pool);

  /** {@code replica} is alive for the next {@code ttlMillis}. */
  void heartbeat(String replica, long ttlMillis);

  boolean alive(String replica);

  /** A replica routed a call to {@code key}'s engine at {@code millis}. */
  void used(String pool, EngineKey key, long millis);

  /** When any replica last routed a call to {@code key}'s engine; 0: never said. */
  long lastUsed(String pool, EngineKey key);

  /** A session was placed on {@code key}'s engine ({@code userId}, {@code sessionId}). */
  void session(String pool, EngineKey key, String userId, String sessionId);

  /** The sessions placed on {@code key}'s engine, as {userId, sessionId}. */
  List<String[]> sessions(String pool, EngineKey key);

  /** {@code key}'s engine is gone: forget its sessions and use. */
  void forget(String pool, EngineKey key);
}
