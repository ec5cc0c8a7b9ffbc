package io.sparkgate.inspect;

/**
 * The current catalog and database while one SQL text is read: starts from the session and follows USE and
 * SET CATALOG inside the text (scripting blocks run statements in order), without changing the session.
 */
final class SqlScope {
  final SessionView session;
  private String
      catalog; // null: the session's, not asked for yet (a stored session is read when it is)
  private String database; // null: the session's, likewise

  SqlScope(SessionView session) {
    this.session = session;
  }

  String catalog() {
    if (catalog == null) catalog = session.currentCatalog();
    return catalog;
  }

  String database() {
    if (database == null) database = session.currentDatabase();
    return database;
  }

  TableRef resolve(java.util.List<String> parts) {
    return TableRef.resolve(parts, catalog(), database(), session);
  }

  /** USE a.b: as Spark's CatalogAndNamespace: a catalog first part switches catalog, else a namespace. */
  void use(java.util.List<String> parts) {
    if (session.isCatalog(parts.get(0))) {
      catalog = parts.get(0);
      database = parts.size() > 1 ? String.join(".", parts.subList(1, parts.size())) : "default";
    } else {
      database = String.join(".", parts);
    }
  }

  void setCatalog(String name) {
    catalog = name;
    database = "default";
  }
}
