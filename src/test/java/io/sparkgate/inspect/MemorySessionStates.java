package io.sparkgate.inspect;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * {@link SessionStates} in this JVM, for tests whose replicas share one process. Every method holds one lock,
 * as Redis runs one command at a time. Thread-safe.
 */
final class MemorySessionStates implements SessionStates {
  private record Key(String userId, String sessionId) {}

  private final Map<Key, String> sessions = new HashMap<>();
  private final Map<String, String> entries = new HashMap<>();
  private long version;

  /** Forgets everything, as a Redis that restarted without its data. */
  synchronized void loseEverything() {
    sessions.clear();
    entries.clear();
  }

  @Override
  public synchronized Read read(String userId, String sessionId) {
    return new Read(Optional.ofNullable(sessions.get(new Key(userId, sessionId))), version);
  }

  @Override
  public synchronized String update(String userId, String sessionId, UnaryOperator<String> change) {
    return sessions.compute(new Key(userId, sessionId), (k, v) -> change.apply(v));
  }

  @Override
  public synchronized Entries entries() {
    return new Entries(version, entries);
  }

  @Override
  public synchronized boolean claim(String key, String entry) {
    if (entries.containsKey(key) || entries.size() >= CacheOwners.MAX_ENTRIES) return false;
    entries.put(key, entry);
    version++;
    return true;
  }

  @Override
  public synchronized boolean replace(String key, String expected, String entry) {
    if (!Objects.equals(entries.get(key), expected)) return false;
    if (entry == null) entries.remove(key);
    else entries.put(key, entry);
    version++;
    return true;
  }
}
