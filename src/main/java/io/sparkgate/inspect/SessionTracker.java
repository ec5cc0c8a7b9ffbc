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
 * Thread-safe.
 */
public final class SessionTracker implements SessionViews {
  private record Key(String userId, String sessionId) {}

  private record State(String catalog, String database, String timeZone, Set<String> functions) {
    /** As a shared store keeps it: each part URL-encoded, functions sorted. */
    String encode() {
      StringBuilder b =
          new StringBuilder(part(catalog)).append('&').append(part(database)).append('&');
      b.append(part(timeZone));
      for (String f : new java.util.TreeSet<>(functions)) b.append('&').append(CacheOwners.url(f));
      return b.toString();
    }

    /** What {@link #encode} wrote; null for a value that is not one. */
    static State decode(String value) {
      String[] p = value.split("&", -1);
      if (p.length < 3 || p[0].isEmpty() || p[1].isEmpty()) return null;
      try {
        Set<String> functions = new java.util.HashSet<>();
        for (int i = 3; i < p.length; i++) functions.add(CacheOwners.unurl(p[i]));
        return new State(
            CacheOwners.unurl(p[0]),
            CacheOwners.unurl(p[1]),
            p[2].isEmpty() ? null : CacheOwners.unurl(p[2]),
            Set.copyOf(functions));
      } catch (IllegalArgumentException e) {
        return null;
      }
    }

    private static String part(String s) {
      return s == null ? "" : CacheOwners.url(s);
    }
  }

  /** Held locally for a session a shared store has nothing for: not asked again until told of a change. */
  private static final State NOTHING_STORED = new State("", "", null, Set.of());

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

  private final Supplier<BackendProfile> profile;
  private final Cache<Key, State> sessions;

  /** Changes of executions that a ReattachExecute may still finish; forgotten after {@code idle}. */
  private final Cache<Operation, Change> parked;

  private final CacheOwners owners = new CacheOwners();
  private final boolean replicated;
  private final SessionStates store; // null: this replica's memory only
  private final java.util.concurrent.atomic.AtomicLong ownerReads =
      new java.util.concurrent.atomic.AtomicLong();
  private volatile Fresh fresh; // null until the first view

  public SessionTracker(Supplier<BackendProfile> profile, Duration idle, Ticker ticker) {
    this(profile, idle, ticker, false);
  }

  /**
   * @param replicated other replicas serve the same sessions (a shared session registry): cache ownership
   *     seen here is then not all there is, since another replica may have seen an entry cached first, so no
   *     session may drop anything from the cache (fails closed until ownership is shared between replicas)
   */
  public SessionTracker(
      Supplier<BackendProfile> profile, Duration idle, Ticker ticker, boolean replicated) {
    this(profile, idle, ticker, replicated, null);
  }

  /**
   * With a store every replica of the pool shares: sessions' state and cache ownership are written to it when
   * they change here, and read from it for a session this replica has not seen, or was told changed.
   */
  public SessionTracker(
      Supplier<BackendProfile> profile, Duration idle, Ticker ticker, SessionStates store) {
    this(profile, idle, ticker, false, Objects.requireNonNull(store, "store"));
  }

  private SessionTracker(
      Supplier<BackendProfile> profile,
      Duration idle,
      Ticker ticker,
      boolean replicated,
      SessionStates store) {
    this.replicated = replicated;
    this.store = store;
    this.profile = Objects.requireNonNull(profile, "profile");
    if (idle.isNegative() || idle.isZero())
      throw new IllegalArgumentException("idle must be positive, got " + idle);
    this.sessions =
        Caffeine.newBuilder()
            .expireAfterAccess(idle)
            .ticker(ticker)
            .executor(Runnable::run)
            .build();
    this.parked =
        Caffeine.newBuilder()
            .expireAfterWrite(idle)
            .ticker(ticker)
            .executor(Runnable::run)
            .maximumSize(100_000)
            .build();
    if (store != null) {
      store.listen(
          new SessionStates.Listener() {
            @Override
            public void sessionChanged(String userId, String sessionId) {
              sessions.invalidate(new Key(userId, sessionId));
            }

            @Override
            public void cacheChanged() {
              readOwners();
            }
          });
      readOwners();
    }
  }

  /** Reads every cache entry from the store into {@link #owners}; a read overtaken by a later one is dropped. */
  private void readOwners() {
    long read = ownerReads.incrementAndGet();
    store
        .entries()
        .thenAccept(
            stored -> {
              java.util.Map<String, CacheOwners.Entry> entries = new java.util.HashMap<>();
              stored.forEach(
                  (k, v) -> {
                    CacheOwners.Entry e = CacheOwners.decode(v);
                    if (e != null) entries.put(k, e);
                  });
              owners.replace(read, entries);
            });
  }

  /**
   * The session's state here, read from the store first when this replica does not hold it; null for a fresh
   * session. A store that cannot answer throws, and the inspector reports that as a fact the policy refuses.
   */
  private State state(Key key) {
    State s =
        store == null || key.sessionId().isEmpty()
            ? sessions.getIfPresent(key)
            : sessions.get(
                key,
                k -> {
                  State stored =
                      store.session(k.userId(), k.sessionId()).map(State::decode).orElse(null);
                  return stored == null ? NOTHING_STORED : stored;
                });
    return s == NOTHING_STORED ? null : s;
  }

  /** Whether a store other replicas share is behind this tracker (a session not held here is read from it). */
  public boolean shared() {
    return store != null;
  }

  /** Whether the session's state is here already: without a store, or once read, no wait. */
  public boolean holds(String userId, String sessionId) {
    return store == null || sessions.getIfPresent(new Key(userId, sessionId)) != null;
  }

  /** The session as the inspector should see it now (a fresh session if unknown or expired). */
  @Override
  public SessionView view(String userId, String sessionId) {
    Fresh f = fresh(profile.get());
    State s = state(new Key(userId, sessionId));
    Set<String> droppable =
        replicated
            ? Set.of()
            : owners.snapshot().droppable(new CacheOwners.Owner(userId, sessionId));
    if (s == null && droppable.isEmpty()) return f.view();
    SessionView.Fixed v = f.view();
    return s == null
        ? v.withState(v.currentCatalog(), v.currentDatabase(), v.timeZone(), Set.of(), droppable)
        : v.withState(s.catalog(), s.database(), s.timeZone(), s.functions(), droppable);
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
    if (store == null) {
      CacheOwners.Owner owner = new CacheOwners.Owner(userId, sessionId);
      cacheEntries(facts)
          .forEach(
              (key, footprint) -> {
                if (owners.reserve(owner, key, footprint)) reserved.add(key);
              });
    }
    return new Change(userId, sessionId, facts, false, reserved);
  }

  /** Applies a change whose request Spark answered successfully. */
  public void apply(Change change) {
    if (change == null) return;
    if (change.release) {
      forget(change.userId, change.sessionId);
    } else {
      observe(change.userId, change.sessionId, change.facts);
    }
  }

  /** Drops a change whose request Spark refused: the cache entries it reserved were never made. */
  public void abandon(Change change) {
    if (change == null) return;
    CacheOwners.Owner owner = new CacheOwners.Owner(change.userId, change.sessionId);
    for (String key : change.reserved) owners.abandon(owner, key);
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
   * Applies the state changes in facts of a request Spark answered successfully (the inspect stage calls it
   * through {@link #apply}). Keeping an active session alive is {@link #view}'s lookup, which every request
   * makes first.
   */
  public void observe(String userId, String sessionId, Facts facts) {
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
    cacheEntries(facts).forEach((key, footprint) -> claim(owner, key, footprint));
    if (session) {
      Key key = new Key(userId, sessionId);
      State before = state(key); // read from the store first, if this replica does not hold it
      State after = next(before, userId, sessionId, facts);
      sessions.put(key, after);
      if (store != null) store.session(userId, sessionId, after.encode());
    }
  }

  /**
   * Records {@code owner} as the owner of a cache entry unless it has one. With a store, the store decides
   * (so two replicas cannot both make their session the owner), and the entry counts here once it has.
   */
  private void claim(CacheOwners.Owner owner, String key, Set<String> footprint) {
    if (store == null) {
      owners.claim(
          owner, key, footprint); // unless reserved, by this session or another, when forwarded
      owners.confirm(owner, key);
    } else {
      // Claimed at the answer, not reserved when forwarded as without a store: a second session's
      // CACHE
      // TABLE answered before the first's finished could win the claim. To do before a shared store
      // is
      // used in production.
      var unused =
          store
              .claim(key, CacheOwners.encode(new CacheOwners.Entry(owner, footprint)))
              .thenRun(this::readOwners);
    }
  }

  /** Forgets {@code owner}'s entries Spark dropped, here at once and in the store. */
  private void release(
      CacheOwners.Owner owner,
      java.util.function.Predicate<java.util.Map.Entry<String, CacheOwners.Entry>> dropped) {
    if (store != null)
      owners.selected(owner, dropped).forEach((k, e) -> store.release(k, CacheOwners.encode(e)));
    owners.release(owner, dropped);
  }

  /** The session's state after the session-level facts of one request, in order. */
  private State next(State old, String userId, String sessionId, Facts facts) {
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
    return new State(catalog, database, tz, Set.copyOf(functions));
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
    if (store != null) store.session(userId, sessionId, null);
  }

  long size() {
    sessions.cleanUp();
    return sessions.estimatedSize();
  }
}
