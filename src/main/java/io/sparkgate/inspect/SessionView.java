package io.sparkgate.inspect;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What the inspector needs to know about a session to resolve names as the server will: its current catalog
 * and database, which names are catalogs (the backend's {@code spark.sql.catalog.*}), the file system that
 * scheme-less paths resolve against, the session extensions whose grammars the server parses with, and the
 * temporary SQL functions the session created.
 */
public interface SessionView {
  /** Spark's built-in session catalog; its name matches case-insensitively, as in Spark's CatalogManager. */
  String SESSION_CATALOG = "spark_catalog";

  /** Hadoop's own default for fs.defaultFS: what a path without a scheme means when nothing says otherwise. */
  String LOCAL_FILE_SYSTEM = "file";

  /** A fresh session on a server with only the session catalog. */
  SessionView DEFAULT = of(SESSION_CATALOG, "default", Set.of());

  String currentCatalog();

  /** The current namespace, parts joined by dots ("default" on a fresh session). */
  String currentDatabase();

  /** True if {@code name} is a registered catalog, so that a multi-part name starting with it names it. */
  boolean isCatalog(String name);

  /** The session time zone if known (SET TIME ZONE, spark.sql.session.timeZone), else null. */
  default String timeZone() {
    return null;
  }

  /** The scheme of the server's fs.defaultFS, lower case: {@code file} unless the profile says otherwise. */
  default String defaultFileSystem() {
    return LOCAL_FILE_SYSTEM;
  }

  /** The session extensions the server loads (spark.sql.extensions class names). */
  default Set<String> extensions() {
    return Set.of();
  }

  /** True if the session created a temporary SQL function of this name (case-insensitive). */
  default boolean isSessionFunction(String name) {
    return false;
  }

  /**
   * True if this session cached the table (CACHE TABLE, catalog.cacheTable; qualified name) and may drop it:
   * no other session's cache entry reads it, as far as Sparkgate knows.
   */
  default boolean cachedBySession(String table) {
    return false;
  }

  /**
   * What the session's temporary view of this name read when it was created (see {@link #tempView} callers:
   * one line per table or path), or null when the session has no such view as far as Sparkgate knows. A
   * one-part name Spark reads as the view, not as a table of the current namespace.
   */
  default String tempView(String name) {
    return null;
  }

  /** How the server reads this session's strings: its substitution and parser settings. */
  default ParserSettings parser() {
    return ParserSettings.SPARK_4_DEFAULTS;
  }

  /**
   * True if this session persisted the plan with this digest (df.persist) and may unpersist it: no other
   * session's cache entry reads the same tables and paths, as far as Sparkgate knows.
   */
  default boolean persistedBySession(String planDigest) {
    return false;
  }

  static SessionView of(String catalog, String database, Set<String> catalogs) {
    return new Fixed(catalog, database, Set.copyOf(catalogs), null);
  }

  /** An immutable view. */
  record Fixed(
      String currentCatalog,
      String currentDatabase,
      Set<String> catalogs,
      String timeZone,
      String defaultFileSystem,
      Set<String> extensions,
      Set<String> functions,
      Set<String> cached,
      ParserSettings parser,
      Map<String, String> views)
      implements SessionView {
    public Fixed {
      Objects.requireNonNull(currentCatalog, "currentCatalog");
      Objects.requireNonNull(currentDatabase, "currentDatabase");
      catalogs = Set.copyOf(catalogs);
      defaultFileSystem =
          defaultFileSystem == null || defaultFileSystem.isEmpty()
              ? LOCAL_FILE_SYSTEM
              : defaultFileSystem.toLowerCase(Locale.ROOT);
      extensions = Set.copyOf(extensions);
      functions = Set.copyOf(functions);
      cached = Set.copyOf(cached);
      parser = parser == null ? ParserSettings.SPARK_4_DEFAULTS : parser;
      views = views == null ? Map.of() : Map.copyOf(views);
    }

    /** Without temporary views. */
    public Fixed(
        String currentCatalog,
        String currentDatabase,
        Set<String> catalogs,
        String timeZone,
        String defaultFileSystem,
        Set<String> extensions,
        Set<String> functions,
        Set<String> cached,
        ParserSettings parser) {
      this(
          currentCatalog,
          currentDatabase,
          catalogs,
          timeZone,
          defaultFileSystem,
          extensions,
          functions,
          cached,
          parser,
          Map.of());
    }

    public Fixed(
        String currentCatalog, String currentDatabase, Set<String> catalogs, String timeZone) {
      this(
          currentCatalog,
          currentDatabase,
          catalogs,
          timeZone,
          LOCAL_FILE_SYSTEM,
          Set.of(),
          Set.of(),
          Set.of(),
          null);
    }

    /**
     * This view with the session's own state replaced (the server's part unchanged). {@code cachedTables}:
     * the cache entries the session may drop, tables by qualified name in lower case and plans by {@code
     * plan:<digest>}.
     */
    public Fixed withState(
        String catalog,
        String database,
        String zone,
        Set<String> sessionFunctions,
        Set<String> cachedTables) {
      return withState(catalog, database, zone, sessionFunctions, cachedTables, Map.of());
    }

    /** As above, with the session's temporary views (lower-case name to what it read). */
    public Fixed withState(
        String catalog,
        String database,
        String zone,
        Set<String> sessionFunctions,
        Set<String> cachedTables,
        Map<String, String> tempViews) {
      return new Fixed(
          catalog,
          database,
          catalogs,
          zone,
          defaultFileSystem,
          extensions,
          sessionFunctions,
          cachedTables,
          parser,
          tempViews);
    }

    /**
     * Leaves out the sets (equal views still hash alike): the statement cache hashes a view on every call,
     * and a set's hash walks all its names.
     */
    @Override
    public int hashCode() {
      return ((currentCatalog.hashCode() * 31 + currentDatabase.hashCode()) * 31
                  + Objects.hashCode(timeZone))
              * 31
          + functions.size() * 7
          + cached.size()
          + views.size() * 13;
    }

    @Override
    public boolean equals(Object o) {
      return o == this
          || (o instanceof Fixed f
              && currentCatalog.equals(f.currentCatalog)
              && currentDatabase.equals(f.currentDatabase)
              && catalogs.equals(f.catalogs)
              && Objects.equals(timeZone, f.timeZone)
              && defaultFileSystem.equals(f.defaultFileSystem)
              && extensions.equals(f.extensions)
              && functions.equals(f.functions)
              && cached.equals(f.cached)
              && parser.equals(f.parser)
              && views.equals(f.views));
    }

    @Override
    public boolean isCatalog(String name) {
      return SESSION_CATALOG.equalsIgnoreCase(name) || catalogs.contains(name);
    }

    @Override
    public boolean cachedBySession(String table) {
      return !cached.isEmpty() && cached.contains(table.toLowerCase(Locale.ROOT));
    }

    @Override
    public boolean persistedBySession(String planDigest) {
      return !cached.isEmpty() && cached.contains(CacheOwners.planKey(planDigest));
    }

    @Override
    public String tempView(String name) {
      return views.isEmpty() ? null : views.get(name.toLowerCase(Locale.ROOT));
    }

    @Override
    public boolean isSessionFunction(String name) {
      return !functions.isEmpty() && functions.contains(name.toLowerCase(Locale.ROOT));
    }
  }
}
