package io.sparkgate.inspect;

import java.util.Set;
import java.util.function.Supplier;

/**
 * A session kept in a shared store, read at the first question about its own state (current catalog and
 * database, time zone, temporary functions, cache entries) and then held for the rest of the request; what
 * the backend's profile answers (catalogs, file system, extensions, parser settings) never waits. Used by one
 * request's inspection at a time, on the thread that may wait.
 */
final class StoredView implements SessionView {
  private final SessionView.Fixed fresh;
  private final Supplier<SessionView.Fixed> read;
  private SessionView.Fixed session; // null until read
  private RuntimeException failure; // what the read failed with

  StoredView(SessionView.Fixed fresh, Supplier<SessionView.Fixed> read) {
    this.fresh = fresh;
    this.read = read;
  }

  /** Whether the session has been read from the store (something asked about its state). */
  boolean wasRead() {
    return session != null || failure != null;
  }

  /** The fresh session of the backend's profile: what this view answers without reading the store. */
  SessionView.Fixed fresh() {
    return fresh;
  }

  /** The session as stored, read now if not yet. */
  SessionView.Fixed read() {
    return session();
  }

  private SessionView.Fixed session() {
    if (session == null) {
      if (failure != null) throw failure;
      try {
        session = read.get();
      } catch (SessionStates.Unavailable | SessionStates.Lost e) {
        failure = e;
        throw e;
      }
    }
    return session;
  }

  void requireRead() {
    if (failure != null) throw failure;
  }

  @Override
  public String currentCatalog() {
    return session().currentCatalog();
  }

  @Override
  public String currentDatabase() {
    return session().currentDatabase();
  }

  @Override
  public String timeZone() {
    return session().timeZone();
  }

  @Override
  public String tempView(String name) {
    return session().tempView(name);
  }

  @Override
  public boolean isSessionFunction(String name) {
    return session().isSessionFunction(name);
  }

  @Override
  public boolean cachedBySession(String table) {
    return session().cachedBySession(table);
  }

  @Override
  public boolean persistedBySession(String planDigest) {
    return session().persistedBySession(planDigest);
  }

  @Override
  public boolean isCatalog(String name) {
    return fresh.isCatalog(name);
  }

  @Override
  public String defaultFileSystem() {
    return fresh.defaultFileSystem();
  }

  @Override
  public Set<String> extensions() {
    return fresh.extensions();
  }

  @Override
  public ParserSettings parser() {
    return fresh.parser();
  }
}
