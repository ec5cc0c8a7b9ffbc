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
 * resolves them. Updated from the facts of requests the backend accepted (USE, SET CATALOG, catalog RPC
 * set_current_*, Config set of spark.sql.defaultCatalog, SET TIME ZONE) and the temporary SQL functions
 * it created (so that calling them is known not to reach a built-in) and the tables it cached (so that it may
 * uncache those, and only those: Spark's cache is shared by every session). Sessions not seen for
 * {@code idle} are forgotten. Thread-safe.
 */
public final class SessionTracker implements SessionViews {
  private record Key(String userId, String sessionId) {}

  private record State(
      String catalog,
      String database,
      String timeZone,
      Set<String> functions,
      Set<String> cached) {}

  /** A profile's fresh session, built once: most calls are on sessions that never changed catalog. */
  private record Fresh(BackendProfile profile, SessionView.Fixed view) {}

  private final Supplier<BackendProfile> profile;
  private final Cache<Key, State> sessions;
  private volatile Fresh fresh; // null until the first view

  public SessionTracker(Supplier<BackendProfile> profile, Duration idle, Ticker ticker) {
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
    if (s == null) return f.view();
    return f.view().withState(s.catalog(), s.database(), s.timeZone(), s.functions(), s.cached());
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
   * Applies the state changes in facts of a request the backend accepted. Nearly no request changes its
   * session's state, so the session is looked up only at the first fact that does. Keeping an active session
   * alive is {@link #view}'s lookup, which every request makes first.
   */
  public void observe(String userId, String sessionId, Facts facts) {
    SessionView now = null;
    String catalog = null;
    String database = null;
    String tz = null;
    Set<String> functions = null;
    Set<String> cached = null;
    for (Fact f : facts.all()) {
      boolean setCatalog =
          f.kind() == Fact.Kind.CATALOG_OP && f.subkind().equals("set_current_catalog");
      boolean setDatabase =
          f.kind() == Fact.Kind.CATALOG_OP && f.subkind().equals("set_current_database");
      String config = f.kind() == Fact.Kind.CONFIG_SET ? f.get("key") : null;
      boolean setDefaultCatalog = "spark.sql.defaultCatalog".equals(config);
      boolean setTimeZone = "spark.sql.session.timeZone".equals(config);
      boolean tempFunction =
          f.kind() == Fact.Kind.CATALOG_OP
              && f.subkind().equals("create_sql_function")
              && "true".equals(f.get("temporary"))
              && f.get("name") != null;
      String cache =
          f.kind() == Fact.Kind.CATALOG_OP
                  && f.get("table") != null
                  && (f.subkind().equals("cache_table") || f.subkind().equals("uncache_table"))
              ? f.subkind()
              : null;
      if (!setCatalog
          && !setDatabase
          && !setDefaultCatalog
          && !setTimeZone
          && !tempFunction
          && cache == null) continue;
      if (now == null) {
        now = view(userId, sessionId);
        catalog = now.currentCatalog();
        database = now.currentDatabase();
        tz = now.timeZone();
        functions = new java.util.HashSet<>(((SessionView.Fixed) now).functions());
        cached = new java.util.HashSet<>(((SessionView.Fixed) now).cached());
      }
      if (cache != null) {
        String table = f.get("table").toLowerCase(java.util.Locale.ROOT);
        if (cache.equals("cache_table")) cached.add(table);
        else cached.remove(table);
      } else if (tempFunction) {
        functions.add(f.get("name").toLowerCase(java.util.Locale.ROOT));
      } else if (setCatalog) {
        catalog = f.get("catalog") != null ? f.get("catalog") : f.get("catalog_name");
        database = "default";
      } else if (setDatabase) {
        if (f.get("catalog") != null) catalog = f.get("catalog");
        database = f.get("database") != null ? f.get("database") : f.get("db_name");
      } else if (setDefaultCatalog) {
        // Takes effect for a session that has not chosen a catalog; we assume it has not
        // (conservative).
        catalog = f.get("value");
      } else {
        tz = f.get("value");
      }
    }
    if (now != null)
      sessions.put(
          new Key(userId, sessionId),
          new State(catalog, database, tz, Set.copyOf(functions), Set.copyOf(cached)));
  }

  /** Drops a session (ReleaseSession). */
  public void forget(String userId, String sessionId) {
    sessions.invalidate(new Key(userId, sessionId));
  }

  long size() {
    sessions.cleanUp();
    return sessions.estimatedSize();
  }
}
