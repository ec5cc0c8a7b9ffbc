package io.sparkgate.inspect;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * {@link SessionStates} in this JVM: for replicas that share one process (tests), where every listener is
 * told at once, on the writer's thread. Thread-safe.
 */
public final class MemorySessionStates implements SessionStates {
  private record Key(String userId, String sessionId) {}

  private final Map<Key, String> sessions = new ConcurrentHashMap<>();
  private final Map<String, String> entries = new ConcurrentHashMap<>();
  private final List<Listener> listeners = new CopyOnWriteArrayList<>();

  @Override
  public Optional<String> session(String userId, String sessionId) {
    return Optional.ofNullable(sessions.get(new Key(userId, sessionId)));
  }

  @Override
  public void session(String userId, String sessionId, String state) {
    if (state == null) sessions.remove(new Key(userId, sessionId));
    else sessions.put(new Key(userId, sessionId), state);
    for (Listener l : listeners) l.sessionChanged(userId, sessionId);
  }

  @Override
  public CompletionStage<Boolean> claim(String key, String entry) {
    boolean recorded = entries.putIfAbsent(key, entry) == null;
    if (recorded) for (Listener l : listeners) l.cacheChanged();
    return CompletableFuture.completedFuture(recorded);
  }

  @Override
  public void release(String key, String entry) {
    if (entries.remove(key, entry)) for (Listener l : listeners) l.cacheChanged();
  }

  @Override
  public CompletionStage<Map<String, String>> entries() {
    return CompletableFuture.completedFuture(Map.copyOf(entries));
  }

  @Override
  public void listen(Listener listener) {
    listeners.add(listener);
  }
}
