package io.sparkgate.grants;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A policy's compiled {@code data_access}: its grants, indexed by catalog and namespace so that checking an
 * access looks at the grants of that namespace (and the few with wildcards there), however many there are.
 * Immutable and thread-safe.
 *
 * <p>{@code default: deny}: every table, namespace and path a request reaches needs a grant to the caller.
 * {@code default: allow}: only data some grant covers is restricted to its holders; the rest is allowed, and
 * a policy without grants allows everything, as without the section. Either way what cannot be resolved is
 * refused once grants are in force.
 */
public final class DataAccess {
  /** The grant name recorded for data no grant covers, under {@code default: allow}. */
  public static final String BY_DEFAULT = "default";

  /** No {@code data_access} section: nothing restricted, nothing checked. */
  public static final DataAccess NONE = new DataAccess(false, false, false, List.of());

  private final boolean present;
  private final boolean denyByDefault;
  private final boolean shadow;
  private final List<Grant> grants;

  /** Table patterns whose catalog and namespace are single names, by those names in lower case. */
  private final Map<String, Map<String, List<Entry>>> byNamespace = new HashMap<>();

  /** Patterns with a single catalog and a namespace glob, by catalog. */
  private final Map<String, List<Entry>> byCatalog = new HashMap<>();

  /** Patterns whose catalog is a glob. */
  private final List<Entry> anyCatalog = new ArrayList<>();

  private final List<Grant> pathGrants = new ArrayList<>();

  private record Entry(Grant grant, TablePattern pattern) {}

  DataAccess(boolean present, boolean denyByDefault, boolean shadow, List<Grant> grants) {
    this.present = present;
    this.denyByDefault = denyByDefault;
    this.shadow = shadow;
    this.grants = List.copyOf(grants);
    for (Grant g : this.grants) {
      for (TablePattern t : g.tables()) {
        Entry e = new Entry(g, t);
        if (t.exactCatalog() == null) anyCatalog.add(e);
        else if (t.exactNamespace() == null)
          byCatalog.computeIfAbsent(t.exactCatalog(), k -> new ArrayList<>()).add(e);
        else
          byNamespace
              .computeIfAbsent(t.exactCatalog(), k -> new HashMap<>())
              .computeIfAbsent(t.exactNamespace(), k -> new ArrayList<>())
              .add(e);
      }
      if (!g.paths().isEmpty()) pathGrants.add(g);
    }
  }

  /** Whether the policy has a {@code data_access} section. */
  public boolean present() {
    return present;
  }

  /** Whether refusals are only recorded ({@code mode: shadow}), not enforced. */
  public boolean shadow() {
    return shadow;
  }

  public boolean denyByDefault() {
    return denyByDefault;
  }

  /** Whether anything is checked at all: a deny default, or grants to restrict data to their holders. */
  public boolean enforcing() {
    return present && (denyByDefault || !grants.isEmpty());
  }

  public List<String> grantNames() {
    return grants.stream().map(Grant::name).toList();
  }

  /** Whether the caller may do everything {@code accesses} lists. */
  public Verdict check(
      String principal, List<String> groups, Optional<String> tenant, Accesses accesses) {
    if (!enforcing()) return Verdict.NOTHING;
    List<Verdict.Granted> granted = new ArrayList<>(accesses.accesses().size());
    if (!accesses.unresolved().isEmpty()) {
      return new Verdict(granted, null, accesses.unresolved().get(0));
    }
    for (Access a : accesses.accesses()) {
      Grant g = first(a, principal, groups, tenant, true);
      if (g != null) {
        granted.add(new Verdict.Granted(a, g.name()));
      } else if (a.alternative()) {
        if (coveredApart(a, a.usual())) return new Verdict(granted, a, null);
      } else if (!denyByDefault && first(a, principal, groups, tenant, false) == null) {
        granted.add(new Verdict.Granted(a, BY_DEFAULT));
      } else {
        return new Verdict(granted, a, null);
      }
    }
    return new Verdict(granted, null, null);
  }

  /**
   * Every grant whose table patterns cover {@code table}, in policy order, one entry per covering pattern:
   * who may do what to it, for access review. A {@code {principal}} pattern covers it for the one principal
   * whose name fits.
   *
   * @param table {@code catalog.namespace.name}, split at its first and last dot as grants are
   * @throws IllegalArgumentException when {@code table} has not three parts
   */
  public List<Coverage> who(String table) {
    int first = table.indexOf('.');
    int last = table.lastIndexOf('.');
    if (first <= 0 || first == last || last == table.length() - 1 || last == first + 1) {
      throw new IllegalArgumentException(
          "'" + table + "' is not catalog.namespace.name (e.g. spark_catalog.finance.payroll)");
    }
    String cat = table.substring(0, first);
    String ns = table.substring(first + 1, last);
    String name = table.substring(last + 1);
    List<Coverage> out = new ArrayList<>();
    for (Grant g : grants) {
      for (TablePattern t : g.tables()) {
        if (!t.hasPlaceholder()) {
          if (t.matchesTable(null, cat, ns, name)) out.add(coverage(g, t.text(), Optional.empty()));
        } else {
          t.principalFor(cat, ns, name)
              .ifPresent(p -> out.add(coverage(g, t.text(), Optional.of(p))));
        }
      }
    }
    return out;
  }

  /** Every grant whose path globs cover {@code path}, in policy order, one entry per covering glob. */
  public List<Coverage> whoPath(String path) {
    List<Coverage> out = new ArrayList<>();
    for (Grant g : pathGrants) {
      for (int i = 0; i < g.paths().size(); i++) {
        if (g.paths().get(i).matches(path)) {
          out.add(coverage(g, g.pathTexts().get(i), Optional.empty()));
        }
      }
    }
    return out;
  }

  /**
   * Every grant {@code principal} holds, in policy order, with its tables as they stand for that principal.
   * A {@code {principal}} pattern is left out for a name that cannot stand as one identifier (it never
   * matches one), and so is a grant left with nothing.
   */
  public List<Holding> what(String principal, List<String> groups, Optional<String> tenant) {
    List<Holding> out = new ArrayList<>();
    boolean substitutable = TablePattern.oneIdentifier(principal);
    for (Grant g : grants) {
      if (!g.to().takes(principal, groups, tenant)) continue;
      List<String> tables = new ArrayList<>();
      for (TablePattern t : g.tables()) {
        if (!t.hasPlaceholder()) tables.add(t.text());
        else if (substitutable) tables.add(t.text().replace(TablePattern.PRINCIPAL, principal));
      }
      if (tables.isEmpty() && g.pathTexts().isEmpty()) continue;
      out.add(new Holding(g.name(), g.toText(), tables, g.pathTexts(), labels(g)));
    }
    return out;
  }

  private static Coverage coverage(Grant g, String pattern, Optional<String> principal) {
    return new Coverage(g.name(), g.toText(), labels(g), pattern, principal);
  }

  private static List<String> labels(Grant g) {
    return g.privileges().stream().sorted().map(Privilege::label).toList();
  }

  /**
   * The first grant (in the policy's order) that covers {@code a}; with {@code held}, only one the caller
   * holds with the privilege {@code a} needs.
   */
  private Grant first(
      Access a, String principal, List<String> groups, Optional<String> tenant, boolean held) {
    Grant best = null;
    if (a.target() == Access.Target.PATH) {
      for (Grant g : pathGrants) {
        if (g.coversPath(a.name()) && (!held || holds(g, a, principal, groups, tenant))) return g;
      }
      return null;
    }
    String catalog = a.catalog().toLowerCase(Locale.ROOT);
    Map<String, List<Entry>> namespaces = byNamespace.get(catalog);
    if (namespaces != null) {
      best =
          first(
              namespaces.get(a.namespace().toLowerCase(Locale.ROOT)),
              a,
              principal,
              groups,
              tenant,
              held,
              best);
    }
    best = first(byCatalog.get(catalog), a, principal, groups, tenant, held, best);
    return first(anyCatalog, a, principal, groups, tenant, held, best);
  }

  private static Grant first(
      List<Entry> entries,
      Access a,
      String principal,
      List<String> groups,
      Optional<String> tenant,
      boolean held,
      Grant best) {
    if (entries == null) return best;
    for (Entry e : entries) {
      Grant g = e.grant();
      if (best != null && best.index() <= g.index()) break; // entries are in policy order
      if (covers(e.pattern(), a, held ? principal : null)
          && (!held || holds(g, a, principal, groups, tenant))) {
        return g;
      }
    }
    return best;
  }

  /** Whether {@code p} takes {@code a}'s object; a null {@code principal} stands for whoever holds it. */
  /**
   * Whether some grant's pattern covers {@code other} without covering {@code usual}: the other meaning of a
   * name may then be someone else's data. A pattern covering both (an auditors' {@code *.*.*}) says nothing.
   */
  private boolean coveredApart(Access other, Access usual) {
    String catalog = other.catalog().toLowerCase(Locale.ROOT);
    Map<String, List<Entry>> namespaces = byNamespace.get(catalog);
    return coveredApart(
            namespaces == null ? null : namespaces.get(other.namespace().toLowerCase(Locale.ROOT)),
            other,
            usual)
        || coveredApart(byCatalog.get(catalog), other, usual)
        || coveredApart(anyCatalog, other, usual);
  }

  private static boolean coveredApart(List<Entry> entries, Access other, Access usual) {
    if (entries == null) return false;
    for (Entry e : entries) {
      if (covers(e.pattern(), other, null) && !covers(e.pattern(), usual, null)) return true;
    }
    return false;
  }

  private static boolean covers(TablePattern p, Access a, String principal) {
    return switch (a.target()) {
      case TABLE -> p.matchesTable(principal, a.catalog(), a.namespace(), a.name());
      case NAMESPACE ->
          p.wholeNamespace() && p.matchesNamespace(principal, a.catalog(), a.namespace());
      case NAMESPACE_LISTING -> p.matchesNamespace(principal, a.catalog(), a.namespace());
      case PATH -> false;
    };
  }

  private static boolean holds(
      Grant g, Access a, String principal, List<String> groups, Optional<String> tenant) {
    if (!g.to().takes(principal, groups, tenant)) return false;
    // Listing a namespace needs a grant on something in it, whatever the privilege.
    return a.target() == Access.Target.NAMESPACE_LISTING || g.privileges().contains(a.privilege());
  }
}
