package io.sparkgate.inspect;

import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * Where what a session's view depends on is kept for every replica of a pool: each session's own state and
 * the owners of Spark's cache entries, as strings the {@link SessionTracker} encodes. Every change is decided
 * in the store, atomically, and read back by every call, so a client's next call meets what its last answer
 * changed whichever replica serves it. Methods that may wait do so for one round trip at most, bounded by the
 * store's timeout; one that cannot answer throws {@link Unavailable}. Thread-safe.
 */
public interface SessionStates {
  /** The store did not answer (down, too slow): the call it serves is answered UNAVAILABLE. */
  final class Unavailable extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public Unavailable(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * Sparkgate no longer knows the session's state (a change Spark answered was not stored, or the store lost
   * it): reading it as fresh could misread its names, so its calls are refused until it is released.
   */
  final class Lost extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public Lost(String message) {
      super(message);
    }
  }

  /**
   * What one call reads: the session's state (empty: none stored) and the version of the cache entries,
   * which grows with every change to them.
   */
  record Read(Optional<String> session, long cacheVersion) {}

  /** The cache entries, by key, as of {@code version}. */
  record Entries(long version, Map<String, String> entries) {
    public Entries {
      entries = Map.copyOf(entries);
    }
  }

  /** The session's state and the cache version, in one round trip; keeps the session from expiring. */
  Read read(String userId, String sessionId);

  /**
   * Replaces the session's state with what {@code change} makes of it (given null when none is stored;
   * returning null forgets it), atomically: a change another replica made meanwhile is read and changed
   * again. Returns the state stored.
   */
  String update(String userId, String sessionId, UnaryOperator<String> change);

  /** Every cache entry, by key, with the version they are of. */
  Entries entries();

  /** Records a cache entry unless {@code key} has one (or the store holds its most); whether it did. */
  boolean claim(String key, String entry);

  /**
   * Replaces the entry of {@code key} while it still is {@code expected} ({@code entry} null: removes it);
   * whether it did.
   */
  boolean replace(String key, String expected, String entry);
}
