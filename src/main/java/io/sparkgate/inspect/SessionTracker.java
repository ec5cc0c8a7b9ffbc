package io.sparkgate.inspect;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Per (user, session id): the current catalog and database, so unqualified names resolve as the server
 * resolves them, the session time zone, the temporary SQL functions the session created (so that calling them
 * is known not to reach a built-in), and, across all sessions, who cached what ({@link CacheOwners}: Spark's
 * cache is shared by every session, so a session may drop only what it cached itself).
 *
 * <p>It learns only from requests Spark answered: the inspect stage takes a {@link Change} when it forwards a
 * request and {@link #apply applies} it once the call succeeded, so a USE that Spark refuses changes nothing.
 * Sessions not seen for {@code idle} are forgotten (their cache entries are not: Spark keeps them).
 *
 * <p>With a {@link SessionStates store} the replicas of a pool share, every call reads its session's state
 * and the cache version from the store (one round trip, off the event loops), cache entries are claimed there
 * when the request is forwarded, and an answered change is written there before the client sees the answer:
 * the client's next call meets it on any replica. Thread-safe.
 */
public final class SessionTracker implements SessionViews {
  private record Key(String userId, String sessionId) {}

  private record State(
      String catalog,
      String database,
      String timeZone,
      Set<String> functions,
      java.util.Map<String, String> views) {
    /**
     * As a shared store keeps it: each part URL-encoded, functions sorted, then the temporary views as
     * {@code name=footprint} (an encoded function has no raw '=').
     */
    String encode() {
      StringBuilder b =
          new StringBuilder(part(catalog)).append('&').append(part(database)).append('&');
      b.append(part(timeZone));
      for (String f : new java.util.TreeSet<>(functions)) b.append('&').append(CacheOwners.url(f));
      for (var v : new java.util.TreeMap<>(views).entrySet()) {
        b.append('&')
            .append(CacheOwners.url(v.getKey()))
            .append('=')
            .append(CacheOwners.url(v.getValue()));
      }
      return b.toString();
    }

    /** What {@link #encode} wrote; null for a value that is not one. */
    static State decode(String value) {
      String[] p = value.split("&", -1);
      if (p.length < 3 || p[0].isEmpty() || p[1].isEmpty()) return null;
      try {
        Set<String> functions = new java.util.HashSet<>();
        java.util.Map<String, String> views = new java.util.HashMap<>();
        for (int i = 3; i < p.length; i++) {
          int eq = p[i].indexOf('=');
          if (eq < 0) functions.add(CacheOwners.unurl(p[i]));
          else
            views.put(
                CacheOwners.unurl(p[i].substring(0, eq)),
                CacheOwners.unurl(p[i].substring(eq + 1)));
        }
        return new State(
            CacheOwners.unurl(p[0]),
            CacheOwners.unurl(p[1]),
            p[2].isEmpty() ? null : CacheOwners.unurl(p[2]),
            Set.copyOf(functions),
            java.util.Map.copyOf(views));
      } catch (IllegalArgumentException e) {
        return null;
      }
    }

    private static String part(String s) {
      return s == null ? "" : CacheOwners.url(s);
    }

    /**
     * Whether all the state says beyond a fresh session is its temporary views: forgetting those (the store
     * lost its data) only makes their names read as tables, which the grants then check, so the session
     * is not lost for it.
     */
    boolean onlyViews(SessionView.Fixed fresh) {
      return catalog.equals(fresh.currentCatalog())
          && database.equals(fresh.currentDatabase())
          && java.util.Objects.equals(timeZone, fresh.timeZone())
          && functions.isEmpty();
    }
  }

  /**
   * What the store keeps for a released session until it expires: a replica that read its state before then
   * reads it as fresh, where a state gone altogether means the store lost it.
   */
  private static final String RELEASED = "released";

  /** A profile's fresh session, built once: most calls are on sessions that never changed catalog. */
  private record Fresh(BackendProfile profile, SessionView.Fixed view) {}

  /**
   * What one request will change in its session once Spark has answered it: made when the request is
   * forwarded, applied (or dropped) when the answer is known. Immutable.
   */
  public static final class Change {
    private final String userId;
    private final String sessionId;
    private final Facts facts;
    private final boolean release;
    private final java.util.List<String> reserved; // cache entries reserved when it was forwarded

    private Change(
        String userId,
        String sessionId,
        Facts facts,
        boolean release,
        java.util.List<String> reserved) {
      this.userId = userId;
      this.sessionId = sessionId;
      this.facts = facts;
      this.release = release;
      this.reserved = java.util.List.copyOf(reserved);
    }
  }

  /** An execution whose stream ended before its answer: the client reattaches to it by operation id. */
  private record Operation(String userId, String sessionId, String operationId) {}

  /**
   * How long a session's state is kept after its last call: longer than Spark keeps an idle session (an hour by
   * default), so that Sparkgate never takes a session Spark still has for a fresh one.
   */
  public static final Duration IDLE = Duration.ofHours(2);

  private final Supplier<BackendProfile> profile;
  private final Cache<Key, State> sessions;

  /** Changes of executions that a ReattachExecute may still finish; forgotten after {@code idle}. */
  private final Cache<Operation, Change> parked;

  /**
   * Sessions whose answered change could not be written to the store: their state there is stale, so they
   * are refused here until released (fails closed). Only with a store.
   */
  private final Cache<Key, Boolean> lost;

  /**
   * Sessions this replica read a state of from the store: should the store answer none later (a Redis that
   * lost its data), the session is refused rather than read as a fresh one. Only with a store.
   */
  private final Cache<Key, Boolean> stateful;

  private final CacheOwners owners = new CacheOwners();
  private final SessionStates store; // null: this replica's memory only
  private volatile Fresh fresh; // null until the first view

  /**
   * @param store where every replica of the pool keeps sessions' state and cache ownership, read by every
   *     call; null: this replica's memory only
   */
  public SessionTracker(
      Supplier<BackendProfile> profile, Duration idle, Ticker ticker, SessionStates store) {
    this.store = store;
    this.profile = Objects.requireNonNull(profile, "profile");
    if (idle.isNegative() || idle.isZero())
      throw new IllegalArgumentException("idle must be positive, got " + idle);
    this.sessions = idleCache(idle, ticker, 1_000_000);
    this.parked =
        Caffeine.newBuilder()
            .expireAfterWrite(idle)
            .ticker(ticker)
            .executor(Runnable::run)
            .maximumSize(100_000)
            .build();
    this.lost = idleCache(idle, ticker, 100_000);
    this.stateful = idleCache(idle, ticker, 1_000_000);
  }

  /** Entries unused for {@code idle} expire; at most {@code maximum} of them (the least used go first). */
  private static <K, V> Cache<K, V> idleCache(Duration idle, Ticker ticker, long maximum) {
    return Caffeine.newBuilder()
        .expireAfterAccess(idle)
        .ticker(ticker)
        .executor(Runnable::run)
        .maximumSize(maximum)
        .build();
  }

  /**
   * Whether a store other replicas share is behind this tracker: every call with a session then reads it,
   * which may wait.
   */
  public boolean shared() {
    return store != null;
  }

  /**
   * The session as the inspector should see it now (a fresh session if unknown or expired). With a store, a
   * view that reads the store at its first question about the session's own state ({@link StoredView}): most
   * calls (a reattach, a release, a query that names no table or function) never ask.
   */
  @Override
  public SessionView view(String userId, String sessionId) {
    Fresh f = fresh(profile.get());
    if (store != null && !sessionId.isEmpty())
      return new StoredView(f.view(), () -> stored(f, userId, sessionId));
    State s = sessions.getIfPresent(new Key(userId, sessionId));
    return withState(f, s, userId, sessionId);
  }

  /**
   * Reads a session from the store, with the cache entries when they changed since last read; a store that
   * cannot answer throws {@link SessionStates.Unavailable}.
   */
  private SessionView.Fixed stored(Fresh f, String userId, String sessionId) {
    Key key = new Key(userId, sessionId);
    if (lost.getIfPresent(key) != null)
      throw new SessionStates.Lost("its last change could not be recorded in the shared store");
    SessionStates.Read read = store.read(userId, sessionId);
    String stored = read.session().orElse(null);
    State s = stored == null || stored.equals(RELEASED) ? null : decode(stored);
    if (s != null && !s.onlyViews(f.view())) stateful.put(key, Boolean.TRUE);
    else if (RELEASED.equals(stored)) stateful.invalidate(key);
    else if (stateful.getIfPresent(key) != null)
      throw new SessionStates.Lost(
          "the shared store no longer holds it (did Redis lose its data?)");
    if (read.cacheVersion() != owners.storedVersion()) readOwners(read.cacheVersion());
    return withState(f, s, userId, sessionId);
  }

  private SessionView.Fixed withState(Fresh f, State s, String userId, String sessionId) {
    Set<String> droppable = owners.snapshot().droppable(new CacheOwners.Owner(userId, sessionId));
    SessionView.Fixed v = f.view();
    if (s == null && droppable.isEmpty()) return v;
    return s == null
        ? v.withState(v.currentCatalog(), v.currentDatabase(), v.timeZone(), Set.of(), droppable)
        : v.withState(s.catalog(), s.database(), s.timeZone(), s.functions(), droppable, s.views());
  }

  /**
   * Throws what reading {@code view} from the store failed with, if it did ({@link SessionStates.Unavailable},
   * {@link SessionStates.Lost}): the inspector may have turned the failure into a fact, and the call is to be
   * answered for what happened instead.
   */
  public static void requireRead(SessionView view) {
    if (view instanceof StoredView stored) stored.requireRead();
  }

  /**
   * Reads every cache entry from the store into {@link #owners}, unless another call did since the store was
   * at {@code version}. One at a time, so that an older read never replaces a newer; a version that differs,
   * rather than grows, also catches a store that lost its entries.
   */
  private void readOwners(long version) {
    synchronized (owners) {
      if (owners.storedVersion() == version) return;
      SessionStates.Entries stored = store.entries();
      owners.replace(stored.version(), decodeEntries(stored.entries()));
    }
  }

  private static java.util.Map<String, CacheOwners.Entry> decodeEntries(
      java.util.Map<String, String> stored) {
    java.util.Map<String, CacheOwners.Entry> entries = new java.util.HashMap<>();
    stored.forEach(
        (k, v) -> {
          CacheOwners.Entry e = CacheOwners.decode(v);
          // One this version cannot read is kept as an unknown owner's: it still blocks drops.
          entries.put(
              k,
              e != null
                  ? e
                  : new CacheOwners.Entry(new CacheOwners.Owner("", ""), Set.of(k), true));
        });
    return entries;
  }

  /** A state the store holds; one this version cannot read is not taken for a fresh session. */
  private static State decode(String stored) {
    State s = State.decode(stored);
    if (s == null)
      throw new IllegalStateException(
          "the shared store holds a session state this version cannot read");
    return s;
  }

  private Fresh fresh(BackendProfile p) {
    Fresh f = fresh;
    if (f == null || f.profile() != p) {
      // Racing threads may each build it; they build equal ones. The profile changes only when
      // re-read.
      f = new Fresh(p, (SessionView.Fixed) p.freshSession());
      fresh = f;
    }
    return f;
  }

  /**
   * What a request of {@code method} with these facts will change in its session if Spark answers it
   * successfully, or null if it changes nothing (nearly every request).
   */
  public Change changes(String method, String userId, String sessionId, Facts facts) {
    if (sessionId.isEmpty()) return null;
    if (method.equals("ReleaseSession")) {
      return new Change(userId, sessionId, facts, true, java.util.List.of());
    }
    boolean changes = false;
    for (Fact f : facts.all()) changes |= changesState(f);
    if (!changes) return null;
    // Spark registers a cache entry when it starts the request, so the entry is reserved now: a
    // second
    // session's CACHE TABLE answered while this one still fills the cache finds it taken.
    java.util.List<String> reserved = new java.util.ArrayList<>();
    CacheOwners.Owner owner = new CacheOwners.Owner(userId, sessionId);
    cacheEntries(facts)
        .forEach(
            (key, footprint) -> {
              boolean mine =
                  store == null
                      ? owners.reserve(owner, key, footprint)
                      : store.claim(
                          key, CacheOwners.encode(new CacheOwners.Entry(owner, footprint, false)));
              if (mine) reserved.add(key);
            });
    return new Change(userId, sessionId, facts, false, reserved);
  }

  /**
   * Applies a change whose request Spark answered successfully. With a store, this writes to it and waits
   * (one bounded round trip per change, and changes are rare): the client must not see the answer before every
   * replica can read what it changed. Should the store fail, the session is refused here from then on.
   */
  public void apply(Change change) {
    if (change == null) return;
    try {
      if (change.release) {
        forget(change.userId, change.sessionId);
      } else {
        observe(change.userId, change.sessionId, change.facts, change.reserved);
      }
    } catch (SessionStates.Unavailable e) {
      lost.put(new Key(change.userId, change.sessionId), Boolean.TRUE);
      throw e;
    }
  }

  /** Drops a change whose request Spark refused: the cache entries it reserved were never made. */
  public void abandon(Change change) {
    if (change == null) return;
    CacheOwners.Owner owner = new CacheOwners.Owner(change.userId, change.sessionId);
    if (store == null) {
      for (String key : change.reserved) owners.abandon(owner, key);
      return;
    }
    java.util.Map<String, Set<String>> entries = cacheEntries(change.facts);
    for (String key : change.reserved) {
      // Should this fail, the reservation stays and nobody may drop the entry (fails closed).
      store.replace(
          key, CacheOwners.encode(new CacheOwners.Entry(owner, entries.get(key), false)), null);
    }
  }

  /**
   * Keeps the change of an execution whose stream ended before its answer, for the ReattachExecute that
   * brings it. One that never comes leaves its cache reservations in place: nobody may drop those (fails
   * closed).
   */
  public void park(String operationId, Change change) {
    if (change == null || operationId.isEmpty()) return;
    parked.put(new Operation(change.userId, change.sessionId, operationId), change);
  }

  /** Whether a parked change waits for this operation's answer. */
  public boolean parked(String userId, String sessionId, String operationId) {
    return parked.getIfPresent(new Operation(userId, sessionId, operationId)) != null;
  }

  /** Applies the parked change of an operation whose answer a ReattachExecute brought. */
  public void applyParked(String userId, String sessionId, String operationId) {
    Change change = parked.asMap().remove(new Operation(userId, sessionId, operationId));
    apply(change);
  }

  /** The cache entries a request's facts create (CACHE TABLE, df.persist), by key, with their footprints. */
  private static java.util.Map<String, Set<String>> cacheEntries(Facts facts) {
    java.util.Map<String, Set<String>> out = new java.util.LinkedHashMap<>();
    for (Fact f : facts.ofKind(Fact.Kind.CATALOG_OP)) {
      if (f.subkind().equals("cache_table") && f.get("table") != null) {
        String table = lower(f.get("table"));
        Set<String> footprint = new java.util.HashSet<>(footprint(facts));
        footprint.add(table);
        out.put(table, Set.copyOf(footprint));
      } else if (f.subkind().equals("persist") && f.get("plan") != null) {
        String key = CacheOwners.planKey(f.get("plan"));
        Set<String> footprint = footprint(facts);
        // A plan that reads no table or path (range, local data) can only share a result with a
        // plan of its own form: its footprint is the plan.
        out.put(key, footprint.isEmpty() ? Set.of(key) : footprint);
      }
    }
    return out;
  }

  private static boolean changesState(Fact f) {
    if (TempViews.changes(f)) return true;
    if (f.kind() == Fact.Kind.CONFIG_SET) {
      String key = f.get("key");
      return "spark.sql.defaultCatalog".equals(key) || "spark.sql.session.timeZone".equals(key);
    }
    if (f.kind() != Fact.Kind.CATALOG_OP) return false;
    return switch (f.subkind()) {
      case "set_current_catalog", "set_current_database" -> true;
      case "create_sql_function" -> "true".equals(f.get("temporary")) && f.get("name") != null;
      case "cache_table", "uncache_table" -> f.get("table") != null;
      case "persist", "unpersist" -> f.get("plan") != null;
      default -> false;
    };
  }

  /**
   * Applies the state changes in facts of a request Spark answered successfully ({@link #apply}), confirming
   * the cache entries it {@code reserved}. Keeping an active session alive is {@link #view}'s lookup, which
   * every request makes first.
   */
  private void observe(
      String userId, String sessionId, Facts facts, java.util.List<String> reserved) {
    CacheOwners.Owner owner = new CacheOwners.Owner(userId, sessionId);
    boolean session = false;
    for (Fact f : facts.all()) {
      if (!changesState(f)) continue;
      if (f.kind() == Fact.Kind.CATALOG_OP) {
        switch (f.subkind()) {
          case "cache_table", "persist" -> {
            continue; // below, once per request
          }
          case "uncache_table" -> {
            // Spark drops every entry whose plan reads the table (the session's own, or it was
            // refused).
            String table = lower(f.get("table"));
            release(
                owner, e -> e.getKey().equals(table) || e.getValue().footprint().contains(table));
            continue;
          }
          case "unpersist" -> {
            String key = CacheOwners.planKey(f.get("plan"));
            release(owner, e -> e.getKey().equals(key));
            continue;
          }
          default -> {}
        }
      }
      session = true;
    }
    cacheEntries(facts)
        .forEach((key, footprint) -> claim(owner, key, footprint, reserved.contains(key)));
    if (!session) return;
    if (store == null) {
      Key key = new Key(userId, sessionId);
      sessions.put(key, next(sessions.getIfPresent(key), facts));
    } else {
      store.update(
          userId,
          sessionId,
          before ->
              next(before == null || before.equals(RELEASED) ? null : decode(before), facts)
                  .encode());
    }
  }

  /**
   * Confirms {@code owner} as the owner of a cache entry it reserved when the request was forwarded, or makes
   * it the owner of one nobody holds. With a store, the store decides, so that two replicas cannot both make
   * their session the owner.
   */
  private void claim(CacheOwners.Owner owner, String key, Set<String> footprint, boolean reserved) {
    if (store == null) {
      owners.claim(owner, key, footprint); // unless reserved, by this session or another
      owners.confirm(owner, key);
    } else if (reserved) {
      store.replace(
          key,
          CacheOwners.encode(new CacheOwners.Entry(owner, footprint, false)),
          CacheOwners.encode(new CacheOwners.Entry(owner, footprint, true)));
    } else {
      store.claim(key, CacheOwners.encode(new CacheOwners.Entry(owner, footprint, true)));
    }
  }

  /**
   * Forgets {@code owner}'s entries Spark dropped. With a store, those of the entries read for this call that
   * are still as read.
   */
  private void release(
      CacheOwners.Owner owner,
      java.util.function.Predicate<java.util.Map.Entry<String, CacheOwners.Entry>> dropped) {
    if (store == null) owners.release(owner, dropped);
    else
      owners
          .selected(owner, dropped)
          .forEach((k, e) -> store.replace(k, CacheOwners.encode(e), null));
  }

  /** The session's state after the session-level facts of one request, in order. */
  private State next(State old, Facts facts) {
    SessionView.Fixed v = fresh(profile.get()).view();
    String catalog = old == null ? v.currentCatalog() : old.catalog();
    String database = old == null ? v.currentDatabase() : old.database();
    String tz = old == null ? v.timeZone() : old.timeZone();
    Set<String> functions = new java.util.HashSet<>(old == null ? Set.of() : old.functions());
    for (Fact f : facts.all()) {
      if (!changesState(f)) continue;
      String config = f.kind() == Fact.Kind.CONFIG_SET ? f.get("key") : null;
      if ("spark.sql.defaultCatalog".equals(config)) {
        // Takes effect for a session that has not chosen a catalog; we assume it has not
        // (conservative).
        catalog = f.get("value");
      } else if ("spark.sql.session.timeZone".equals(config)) {
        tz = f.get("value");
      } else if (f.subkind().equals("create_sql_function")) {
        functions.add(lower(f.get("name")));
      } else if (f.subkind().equals("set_current_catalog")) {
        catalog = f.get("catalog") != null ? f.get("catalog") : f.get("catalog_name");
        database = "default";
      } else if (f.subkind().equals("set_current_database")) {
        if (f.get("catalog") != null) catalog = f.get("catalog");
        database = f.get("database") != null ? f.get("database") : f.get("db_name");
      }
    }
    return new State(
        catalog,
        database,
        tz,
        Set.copyOf(functions),
        TempViews.next(old == null ? java.util.Map.of() : old.views(), facts));
  }

  /** What the request's plan reads: the tables and paths a cache entry it makes depends on. */
  private static Set<String> footprint(Facts facts) {
    Set<String> out = new java.util.HashSet<>();
    for (Fact t : facts.ofKind(Fact.Kind.TABLE_READ))
      if (t.get("table") != null) out.add(lower(t.get("table")));
    for (Fact p : facts.ofKind(Fact.Kind.PATH))
      if (p.get("path") != null) out.add("path:" + p.get("path"));
    return out;
  }

  private static String lower(String s) {
    return s.toLowerCase(java.util.Locale.ROOT);
  }

  /** Drops a session (ReleaseSession). Its cache entries stay: Spark keeps them. */
  public void forget(String userId, String sessionId) {
    sessions.invalidate(new Key(userId, sessionId));
    lost.invalidate(new Key(userId, sessionId));
    stateful.invalidate(new Key(userId, sessionId));
    if (store != null) store.update(userId, sessionId, before -> RELEASED);
  }

  long size() {
    sessions.cleanUp();
    return sessions.estimatedSize();
  }
}
