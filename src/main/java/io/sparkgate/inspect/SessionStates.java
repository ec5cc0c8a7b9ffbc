package io.sparkgate.inspect;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Where what a session's view depends on is kept for every replica of a pool: each session's own state and
 * the owners of Spark's cache entries, as strings the {@link SessionTracker} encodes. A replica keeps in memory
 * what it read, and is told when the store changed ({@link Listener}), so its hot path reads the store only for
 * a session it has not seen or that changed since. Thread-safe.
 */
public interface SessionStates {
  /** Told that the store changed; called on the store's thread, so it must not wait. */
  interface Listener {
    void sessionChanged(String userId, String sessionId);

    void cacheChanged();
  }

  /** A session's stored state, or empty; may wait on the store (call it off the event loops). */
  Optional<String> session(String userId, String sessionId);

  /** Stores a session's state ({@code null}: forgets it); does not wait. */
  void session(String userId, String sessionId, String state);

  /** Records a cache entry unless {@code key} has one; completes with whether it recorded it. */
  CompletionStage<Boolean> claim(String key, String entry);

  /** Removes the entry of {@code key} if it still is {@code entry}; does not wait. */
  void release(String key, String entry);

  /** Every cache entry, by key. */
  CompletionStage<Map<String, String>> entries();

  void listen(Listener listener);
}
