package io.sparkgate.grants;

import java.util.Objects;

/**
 * One thing a request does to data: a privilege on a table (or view, or function), on a namespace, or on a
 * path. Names are as Spark resolved them (catalog, namespace parts joined by dots, name); a path as written,
 * with the default file system's scheme added when it had none.
 *
 * @param where the place in the request it came from, for the audit record and the logs
 * @param usual null, or the usual meaning of a name this access is the other meaning of, which the catalog
 *     decides only when it runs (an Iceberg name like {@code db.t.history} is the table {@code history} in
 *     {@code db.t} if there is one, else {@code t}'s history): such an access is refused only where the
 *     caller holds no grant for it and some grant's pattern covers it but not the usual meaning, that is
 *     where it may be someone else's data
 */
public record Access(
    Target target,
    String catalog,
    String namespace,
    String name,
    Privilege privilege,
    String where,
    Access usual) {

  /** What an access is to. */
  public enum Target {
    TABLE,
    /** A namespace as a whole: creating, altering or dropping it needs a grant on all of its tables. */
    NAMESPACE,
    /** Listing or describing a namespace: needs a grant on something in it. */
    NAMESPACE_LISTING,
    PATH
  }

  public Access {
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(privilege, "privilege");
    catalog = catalog == null ? "" : catalog;
    namespace = namespace == null ? "" : namespace;
    name = name == null ? "" : name;
    where = where == null ? "" : where;
  }

  public Access(
      Target target,
      String catalog,
      String namespace,
      String name,
      Privilege privilege,
      String where) {
    this(target, catalog, namespace, name, privilege, where, null);
  }

  static Access table(String catalog, String namespace, String name, Privilege p, String where) {
    return new Access(Target.TABLE, catalog, namespace, name, p, where);
  }

  static Access path(String path, Privilege p, String where) {
    return new Access(Target.PATH, "", "", path, p, where);
  }

  /** Whether this is the other meaning of a name (see {@code usual}). */
  public boolean alternative() {
    return usual != null;
  }

  /** What an access is to and how, not where nor whether it is an alternative: a table read twice is one. */
  Key key() {
    return new Key(target, catalog, namespace, name, privilege);
  }

  record Key(Target target, String catalog, String namespace, String name, Privilege privilege) {}

  /** What it is to, as a message names it: {@code table spark_catalog.finance.payroll}, {@code path s3a://b/x}. */
  public String object() {
    return switch (target) {
      case TABLE -> "table " + qualified();
      case NAMESPACE, NAMESPACE_LISTING ->
          "namespace " + catalog + (namespace.isEmpty() ? "" : "." + namespace);
      case PATH -> "path " + name;
    };
  }

  /** The table's name in full, {@code catalog.namespace.name} (the namespace left out when empty). */
  public String qualified() {
    return target == Target.PATH
        ? name
        : catalog
            + (namespace.isEmpty() ? "" : "." + namespace)
            + (name.isEmpty() ? "" : "." + name);
  }
}
