package io.sparkgate.inspect;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who put what into the Spark cache, as far as Sparkgate saw it answered: Spark keeps one cache per server,
 * shared by all its sessions, so ownership is kept across sessions, not per session. An entry is a table
 * ({@code CACHE TABLE}, {@code catalog.cacheTable}; key: its qualified name in lower case) or a plan
 * ({@code df.persist()}; key: {@link #planKey}), and belongs to the first session that cached it: caching what
 * is already cached changes nothing in Spark, so it makes nobody an owner.
 *
 * <p>Spark drops entries by plan equivalence (an unpersist drops every entry whose plan has the same result,
 * an uncache of a table every entry whose plan reads it), which Sparkgate cannot decide from bytes. So each
 * entry also keeps its footprint, the tables and paths its plan reads, and a session may drop an entry only
 * while no other session's entry could be hit: for a plan, none with the same footprint; for a table, none
 * whose footprint holds the table. That refuses some drops Spark would confine to the session's own entries.
 * A plan that reads no table or path (range, local data) has itself as footprint, so that two users' local
 * DataFrames do not block each other: an equivalent plan written differently (other aliases, operands
 * swapped) is not recognized there, the one case where a drop may reach another session's entry (of data
 * that is not a table's).
 *
 * <p>Entries stay until their owner drops them (Spark keeps a cache entry after its session ended). At most
 * {@link #MAX_ENTRIES}: past that, new entries are not recorded, so nobody owns them (fails closed).
 *
 * <p>Thread-safe: writers (answered cache operations, rare) copy the map under a lock and publish an
 * immutable {@link Snapshot}; readers take the latest snapshot without locking.
 */
final class CacheOwners {
  private static final Logger log = LoggerFactory.getLogger(CacheOwners.class);

  static final int MAX_ENTRIES = 10_000;

  /** The prefix of a plan entry's key; a qualified table name never starts with it. */
  static final String PLAN = "plan:";

  /** A session, as Spark keys it. */
  record Owner(String userId, String sessionId) {}

  /** One cache entry: who cached it first, and what its plan reads. */
  record Entry(Owner owner, Set<String> footprint) {
    Entry {
      footprint = Set.copyOf(footprint);
    }
  }

  private final Object lock = new Object();
  private volatile Snapshot snapshot = new Snapshot(0, Map.of());
  private boolean fullLogged; // guarded by lock

  /** The key of a persisted plan: the digest of its relation as the client encoded it. */
  static String planKey(String digest) {
    return PLAN + digest;
  }

  Snapshot snapshot() {
    return snapshot;
  }

  /** Records {@code owner} as the owner of {@code key} unless someone already cached it. */
  void claim(Owner owner, String key, Set<String> footprint) {
    synchronized (lock) {
      Map<String, Entry> now = snapshot.entries;
      if (now.containsKey(key)) return;
      if (now.size() >= MAX_ENTRIES) {
        if (!fullLogged) {
          fullLogged = true;
          log.warn(
              "{} cache entries recorded; newer ones have no owner, so nobody may drop them through"
                  + " Sparkgate",
              MAX_ENTRIES);
        }
        return;
      }
      Map<String, Entry> next = new HashMap<>(now);
      next.put(key, new Entry(owner, footprint));
      publish(next);
    }
  }

  /** Forgets {@code owner}'s entries that {@code dropped} selects (Spark dropped them at its request). */
  void release(Owner owner, Predicate<Map.Entry<String, Entry>> dropped) {
    synchronized (lock) {
      Map<String, Entry> next = new HashMap<>(snapshot.entries);
      if (next.entrySet().removeIf(e -> e.getValue().owner().equals(owner) && dropped.test(e)))
        publish(next);
    }
  }

  private void publish(Map<String, Entry> entries) {
    snapshot = new Snapshot(snapshot.version + 1, Map.copyOf(entries));
  }

  /** The entries at one moment; what each owner may drop is worked out once per snapshot, on demand. */
  static final class Snapshot {
    final long version;
    final Map<String, Entry> entries;
    private final Set<Owner> owners;
    private final Map<Owner, Set<String>> droppable = new ConcurrentHashMap<>();

    Snapshot(long version, Map<String, Entry> entries) {
      this.version = version;
      this.entries = entries;
      Set<Owner> o = new HashSet<>();
      for (Entry e : entries.values()) o.add(e.owner());
      this.owners = Set.copyOf(o);
    }

    /** The keys {@code owner} may drop now: its own entries that no other session's entry shares. */
    Set<String> droppable(Owner owner) {
      if (owners.isEmpty() || !owners.contains(owner)) return Set.of();
      return droppable.computeIfAbsent(owner, this::compute);
    }

    private Set<String> compute(Owner owner) {
      Set<String> out = new HashSet<>();
      for (Map.Entry<String, Entry> mine : entries.entrySet()) {
        if (!mine.getValue().owner().equals(owner)) continue;
        String key = mine.getKey();
        boolean table = !key.startsWith(PLAN);
        boolean shared = false;
        for (Entry other : entries.values()) {
          if (other.owner().equals(owner)) continue;
          // UNCACHE TABLE cascades to every plan reading the table; unpersist drops plans with the
          // same result, which read the same tables and paths.
          if (table
              ? other.footprint().contains(key)
              : other.footprint().equals(mine.getValue().footprint())) {
            shared = true;
            break;
          }
        }
        if (!shared) out.add(key);
      }
      return Set.copyOf(out);
    }
  }
}
