package io.sparkgate.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/** The directory of a proxy without Redis: one replica, so its own memory is the whole truth. */
final class MemoryDirectory implements EngineDirectory {
  private final Map<String, EngineRecord> records = new ConcurrentHashMap<>();
  private final Map<String, Long> used = new ConcurrentHashMap<>();
  private final Map<String, Set<List<String>>> sessions = new ConcurrentHashMap<>();

  private static String k(String pool, EngineKey key) {
    return pool + "|" + key.id();
  }

  @Override
  public Optional<EngineRecord> find(String pool, EngineKey key) {
    return Optional.ofNullable(records.get(k(pool, key)));
  }

  @Override
  public boolean claim(String pool, EngineKey key, EngineRecord record) {
    return records.putIfAbsent(k(pool, key), record) == null;
  }

  @Override
  public boolean replace(String pool, EngineKey key, EngineRecord expected, EngineRecord next) {
    return next == null
        ? records.remove(k(pool, key), expected)
        : records.replace(k(pool, key), expected, next);
  }

  @Override
  public Map<String, EngineRecord> all(String pool) {
    Map<String, EngineRecord> out = new TreeMap<>();
    records.forEach(
        (k, r) -> {
          if (k.startsWith(pool + "|")) out.put(r.key(), r);
        });
    return out;
  }

  @Override
  public void heartbeat(String replica, long ttlMillis) {}

  @Override
  public boolean alive(String replica) {
    return true;
  }

  @Override
  public void used(String pool, EngineKey key, long millis) {
    used.merge(k(pool, key), millis, Math::max);
  }

  @Override
  public long lastUsed(String pool, EngineKey key) {
    return used.getOrDefault(k(pool, key), 0L);
  }

  @Override
  public void session(String pool, EngineKey key, String userId, String sessionId) {
    sessions
        .computeIfAbsent(k(pool, key), x -> ConcurrentHashMap.newKeySet())
        .add(List.of(userId, sessionId));
  }

  @Override
  public List<String[]> sessions(String pool, EngineKey key) {
    List<String[]> out = new ArrayList<>();
    sessions.getOrDefault(k(pool, key), Set.of()).forEach(s -> out.add(s.toArray(String[]::new)));
    return out;
  }

  @Override
  public void forget(String pool, EngineKey key) {
    used.remove(k(pool, key));
    sessions.remove(k(pool, key));
  }
}
