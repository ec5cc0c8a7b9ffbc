package io.sparkgate.inspect;

import com.google.errorprone.annotations.concurrent.GuardedBy;
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

  /**
   * One cache entry: who cached it first, what its plan reads, and whether Spark has answered the request
   * that cached it. An entry is reserved when the request is forwarded, since Spark registers the entry when
   * it starts: a second session's CACHE TABLE of the same table, answered at once while the first still
   * fills the cache, must not make the second the owner. It may be dropped by its owner once confirmed.
   */
  record Entry(Owner owner, Set<String> footprint, boolean confirmed) {
    Entry {
      footprint = Set.copyOf(footprint);
    }
  }

  private final Object lock = new Object();
  private volatile Snapshot snapshot = new Snapshot(Map.of());

  @GuardedBy("lock")
  private boolean fullLogged;

  @GuardedBy("lock")
  private long storedVersion;

  /** The key of a persisted plan: the digest of its relation as the client encoded it. */
  static String planKey(String digest) {
    return PLAN + digest;
  }

  Snapshot snapshot() {
    return snapshot;
  }

  /** Records {@code owner} as the owner of {@code key} unless someone already cached it. */
  void claim(Owner owner, String key, Set<String> footprint) {
    reserve(owner, key, footprint, true);
  }

  /**
   * Reserves {@code key} for {@code owner} unless someone already cached or reserved it: true if it did. A
   * reservation is confirmed ({@link #confirm}) or dropped ({@link #abandon}) when Spark answers.
   */
  boolean reserve(Owner owner, String key, Set<String> footprint) {
    return reserve(owner, key, footprint, false);
  }

  /** Spark answered the request that reserved {@code key} for {@code owner}: the entry is its to drop. */
  void confirm(Owner owner, String key) {
    synchronized (lock) {
      Entry e = snapshot.entries.get(key);
      if (e == null || e.confirmed() || !e.owner().equals(owner)) return;
      Map<String, Entry> next = new HashMap<>(snapshot.entries);
      next.put(key, new Entry(owner, e.footprint(), true));
      publish(next);
    }
  }

  /** Spark refused the request that reserved {@code key} for {@code owner}: it cached nothing. */
  void abandon(Owner owner, String key) {
    synchronized (lock) {
      Entry e = snapshot.entries.get(key);
      if (e == null || e.confirmed() || !e.owner().equals(owner)) return;
      Map<String, Entry> next = new HashMap<>(snapshot.entries);
      next.remove(key);
      publish(next);
    }
  }

  private boolean reserve(Owner owner, String key, Set<String> footprint, boolean confirmed) {
    synchronized (lock) {
      Map<String, Entry> now = snapshot.entries;
      if (now.containsKey(key)) return false;
      if (now.size() >= MAX_ENTRIES) {
        if (!fullLogged) {
          fullLogged = true;
          log.warn(
              "{} cache entries recorded; newer ones have no owner, so nobody may drop them through"
                  + " Sparkgate",
              MAX_ENTRIES);
        }
        return false;
      }
      Map<String, Entry> next = new HashMap<>(now);
      next.put(key, new Entry(owner, footprint, confirmed));
      publish(next);
      return true;
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

  /** {@code owner}'s entries that {@code dropped} selects, as of now. */
  Map<String, Entry> selected(Owner owner, Predicate<Map.Entry<String, Entry>> dropped) {
    Map<String, Entry> out = new HashMap<>();
    for (Map.Entry<String, Entry> e : snapshot.entries.entrySet())
      if (e.getValue().owner().equals(owner) && dropped.test(e)) out.put(e.getKey(), e.getValue());
    return out;
  }

  /** Replaces every entry with what a shared store holds at {@code version}. */
  void replace(long version, Map<String, Entry> entries) {
    synchronized (lock) {
      storedVersion = version;
      publish(entries);
    }
  }

  /** The version of the shared store's entries held here (0: none read). */
  long storedVersion() {
    synchronized (lock) {
      return storedVersion;
    }
  }

  private void publish(Map<String, Entry> entries) {
    snapshot = new Snapshot(Map.copyOf(entries));
  }

  /**
   * An entry as a shared store keeps it: 1 (confirmed) or 0 (reserved), its owner and its footprint, each
   * part URL-encoded and the footprint sorted, so that equal entries are equal strings.
   */
  static String encode(Entry entry) {
    StringBuilder b =
        new StringBuilder(entry.confirmed() ? "1" : "0")
            .append('&')
            .append(url(entry.owner().userId()))
            .append('&')
            .append(url(entry.owner().sessionId()));
    for (String f : new java.util.TreeSet<>(entry.footprint())) b.append('&').append(url(f));
    return b.toString();
  }

  /** The entry {@link #encode} wrote; null for a value that is not one. */
  static Entry decode(String value) {
    String[] parts = value.split("&", -1);
    if (parts.length < 3 || !(parts[0].equals("0") || parts[0].equals("1"))) return null;
    try {
      Set<String> footprint = new HashSet<>();
      for (int i = 3; i < parts.length; i++) footprint.add(unurl(parts[i]));
      return new Entry(
          new Owner(unurl(parts[1]), unurl(parts[2])), footprint, parts[0].equals("1"));
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  static String url(String s) {
    return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8);
  }

  static String unurl(String s) {
    return java.net.URLDecoder.decode(s, java.nio.charset.StandardCharsets.UTF_8);
  }

  /** The entries at one moment; what each owner may drop is worked out once per snapshot, on demand. */
  static final class Snapshot {
    final Map<String, Entry> entries;
    private final Set<Owner> owners;
    private final Map<Owner, Set<String>> droppable = new ConcurrentHashMap<>();

    Snapshot(Map<String, Entry> entries) {
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
        if (!mine.getValue().owner().equals(owner) || !mine.getValue().confirmed()) continue;
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
