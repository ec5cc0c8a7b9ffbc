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

  private record State(String catalog, String database, String timeZone, Set<String> functions) {}

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

    private Change(String userId, String sessionId, Facts facts, boolean release) {
      this.userId = userId;
      this.sessionId = sessionId;
      this.facts = facts;
      this.release = release;
    }
  }

  private final Supplier<BackendProfile> profile;
  private final Cache<Key, State> sessions;
  private final CacheOwners owners = new CacheOwners();
  private final boolean replicated;
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
    this.replicated = replicated;
    this.profile = Objects.requireNonNull(profile, "profile");
    if (idle.isNegative() || idle.isZero())
      throw new IllegalArgumentException("idle must be positive, got " + idle);
    this.sessions =
        Caffeine.newBuilder()
            .expireAfterAccess(idle)
            .ticker(ticker)
            .executor(Runnable::run)
            .build();
  }

  /** The session as the inspector should see it now (a fresh session if unknown or expired). */
  @Override
  public SessionView view(String userId, String sessionId) {
    Fresh f = fresh(profile.get());
    State s = sessions.getIfPresent(new Key(userId, sessionId));
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
    if (method.equals("ReleaseSession")) return new Change(userId, sessionId, facts, true);
    for (Fact f : facts.all()) {
      if (changesState(f)) return new Change(userId, sessionId, facts, false);
    }
    return null;
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
          case "cache_table" -> {
            String table = lower(f.get("table"));
            Set<String> footprint = new java.util.HashSet<>(footprint(facts));
            footprint.add(table);
            owners.claim(owner, table, footprint);
            continue;
          }
          case "persist" -> {
            String key = CacheOwners.planKey(f.get("plan"));
            Set<String> footprint = footprint(facts);
            // A plan that reads no table or path (range, local data) can only share a result with a
            // plan of its own form: its footprint is the plan.
            owners.claim(owner, key, footprint.isEmpty() ? Set.of(key) : footprint);
            continue;
          }
          case "uncache_table" -> {
            // Spark drops every entry whose plan reads the table (the session's own, or it was
            // refused).
            String table = lower(f.get("table"));
            owners.release(
                owner, e -> e.getKey().equals(table) || e.getValue().footprint().contains(table));
            continue;
          }
          case "unpersist" -> {
            String key = CacheOwners.planKey(f.get("plan"));
            owners.release(owner, e -> e.getKey().equals(key));
            continue;
          }
          default -> {}
        }
      }
      session = true;
    }
    if (session) {
      sessions
          .asMap()
          .compute(new Key(userId, sessionId), (k, old) -> next(old, userId, sessionId, facts));
    }
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
  }

  long size() {
    sessions.cleanUp();
    return sessions.estimatedSize();
  }
}
