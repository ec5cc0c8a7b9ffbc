package io.sparkgate.inspect;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Per (user, session id): the current catalog and database, so unqualified names resolve as the server
 * resolves them. Updated from the facts of requests the backend accepted (USE, SET CATALOG, catalog RPC
 * set_current_*, Config set of spark.sql.defaultCatalog, SET TIME ZONE). Sessions not seen for
 * {@code idle} are forgotten. Thread-safe.
 */
public final class SessionTracker {
  private record Key(String userId, String sessionId) {}

  private record State(String catalog, String database, String timeZone) {}

  private final Supplier<BackendProfile> profile;
  private final Cache<Key, State> sessions;

  public SessionTracker(Supplier<BackendProfile> profile, Duration idle, Ticker ticker) {
    this.profile = Objects.requireNonNull(profile, "profile");
    if (idle.isNegative() || idle.isZero()) throw new IllegalArgumentException("idle must be positive, got " + idle);
    this.sessions = Caffeine.newBuilder().expireAfterAccess(idle).ticker(ticker).executor(Runnable::run).build();
  }

  /** The session as the inspector should see it now (a fresh session if unknown or expired). */
  public SessionView view(String userId, String sessionId) {
    BackendProfile p = profile.get();
    State s = sessions.getIfPresent(new Key(userId, sessionId));
    if (s == null) return p.freshSession();
    return new SessionView.Fixed(s.catalog(), s.database(), p.catalogNames(), s.timeZone());
  }

  /** Applies the state changes in facts of a request the backend accepted. */
  public void observe(String userId, String sessionId, Facts facts) {
    SessionView now = view(userId, sessionId);
    String catalog = now.currentCatalog();
    String database = now.currentDatabase();
    String tz = now.timeZone();
    boolean changed = false;
    for (Fact f : facts.all()) {
      if (f.kind() == Fact.Kind.CATALOG_OP && f.subkind().equals("set_current_catalog")) {
        catalog = f.get("catalog") != null ? f.get("catalog") : f.get("catalog_name");
        database = "default";
        changed = true;
      } else if (f.kind() == Fact.Kind.CATALOG_OP && f.subkind().equals("set_current_database")) {
        if (f.get("catalog") != null) catalog = f.get("catalog");
        database = f.get("database") != null ? f.get("database") : f.get("db_name");
        changed = true;
      } else if (f.kind() == Fact.Kind.CONFIG_SET && "spark.sql.defaultCatalog".equals(f.get("key"))) {
        // Takes effect for a session that has not chosen a catalog; we assume it has not (conservative).
        catalog = f.get("value");
        changed = true;
      } else if (f.kind() == Fact.Kind.CONFIG_SET && "spark.sql.session.timeZone".equals(f.get("key"))) {
        tz = f.get("value");
        changed = true;
      }
    }
    Key key = new Key(userId, sessionId);
    if (changed) sessions.put(key, new State(catalog, database, tz));
    else sessions.getIfPresent(key); // touch: keeps an active session alive
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
