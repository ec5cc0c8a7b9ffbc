package io.sparkgate.inspect;

import java.util.Objects;
import java.util.Set;

/**
 * What the inspector needs to know about a session to resolve names as the server will: its current catalog
 * and database, and which names are catalogs (the backend's {@code spark.sql.catalog.*}).
 */
public interface SessionView {
  /** Spark's built-in session catalog; its name matches case-insensitively, as in Spark's CatalogManager. */
  String SESSION_CATALOG = "spark_catalog";

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

  static SessionView of(String catalog, String database, Set<String> catalogs) {
    return new Fixed(catalog, database, Set.copyOf(catalogs), null);
  }

  /** An immutable view. */
  record Fixed(String currentCatalog, String currentDatabase, Set<String> catalogs, String timeZone)
      implements SessionView {
    public Fixed {
      Objects.requireNonNull(currentCatalog, "currentCatalog");
      Objects.requireNonNull(currentDatabase, "currentDatabase");
      catalogs = Set.copyOf(catalogs);
    }

    /**
     * Leaves out the catalog set (equal views still hash alike): the statement cache hashes a view on every
     * call, and the set's hash walks all its names.
     */
    @Override
    public int hashCode() {
      return (currentCatalog.hashCode() * 31 + currentDatabase.hashCode()) * 31 + Objects.hashCode(timeZone);
    }

    @Override
    public boolean equals(Object o) {
      return o == this || o instanceof Fixed f && currentCatalog.equals(f.currentCatalog)
          && currentDatabase.equals(f.currentDatabase) && catalogs.equals(f.catalogs) && Objects.equals(timeZone, f.timeZone);
    }

    @Override
    public boolean isCatalog(String name) {
      return SESSION_CATALOG.equalsIgnoreCase(name) || catalogs.contains(name);
    }
  }
}
