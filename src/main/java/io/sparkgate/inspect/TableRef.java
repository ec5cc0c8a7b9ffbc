package io.sparkgate.inspect;

import java.util.List;

/**
 * A table name resolved the way Spark's CatalogAndIdentifier resolves it: one part is current catalog +
 * current database; more parts name a catalog first only if the first part is a registered catalog,
 * otherwise the whole prefix is a namespace in the current catalog.
 */
record TableRef(String catalog, String database, String name) {

  static TableRef resolve(
      List<String> parts, String currentCatalog, String currentDatabase, SessionView session) {
    int n = parts.size();
    if (n == 1) return new TableRef(currentCatalog, currentDatabase, parts.get(0));
    if (session.isCatalog(parts.get(0))) {
      String catalog =
          SessionView.SESSION_CATALOG.equalsIgnoreCase(parts.get(0))
              ? SessionView.SESSION_CATALOG
              : parts.get(0);
      return new TableRef(catalog, String.join(".", parts.subList(1, n - 1)), parts.get(n - 1));
    }
    return new TableRef(
        currentCatalog, String.join(".", parts.subList(0, n - 1)), parts.get(n - 1));
  }

  /**
   * A namespace as Spark's CatalogAndNamespace reads it: a first part that is a registered catalog names it,
   * otherwise the whole name is a namespace of the current catalog. The result's name is empty.
   */
  static TableRef namespace(List<String> parts, String currentCatalog, SessionView session) {
    if (!parts.isEmpty() && session.isCatalog(parts.get(0))) {
      String catalog =
          SessionView.SESSION_CATALOG.equalsIgnoreCase(parts.get(0))
              ? SessionView.SESSION_CATALOG
              : parts.get(0);
      return new TableRef(catalog, String.join(".", parts.subList(1, parts.size())), "");
    }
    return new TableRef(currentCatalog, String.join(".", parts), "");
  }

  /** As the namespace of a listing or a namespace statement: {@code ns_catalog} and {@code namespace}. */
  void addNamespaceTo(FactSink.Builder b) {
    b.put("ns_catalog", catalog).put("namespace", database);
  }

  String qualified() {
    return database.isEmpty() ? catalog + "." + name : catalog + "." + database + "." + name;
  }

  void addTo(FactSink.Builder b) {
    b.put("catalog", catalog).put("database", database).put("name", name).put("table", qualified());
  }
}
