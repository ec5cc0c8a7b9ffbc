package io.sparkgate.call;

import io.sparkgate.config.Glob;
import io.sparkgate.config.MatchConfig;
import java.util.List;
import java.util.Optional;

/**
 * Whom a {@code match:} block takes, compiled once: the one reading of a route's match, a quota override's
 * and a policy rule's (and of a grant's {@code to:}), so that the same block names the same principals in
 * every file. Principals, groups and tenants are {@link Glob#exact exact} globs over the verified identity,
 * as the identity provider states it; {@code authority} is a host glob in any case, as host names are. Every
 * list that is set must match: {@code groups} when any of the principal's groups does, {@code tenants} never
 * for a principal without a tenant, {@code authority} never when the host dialled is unknown. An empty block
 * takes everyone.
 */
public final class MatchBlock {
  public static final MatchBlock ANYONE = of(MatchConfig.ANYONE);

  private final List<Glob> principals;
  private final List<Glob> groups;
  private final List<Glob> tenants;
  private final List<Glob> authority;

  private MatchBlock(
      List<String> principals, List<String> groups, List<String> tenants, List<String> authority) {
    this.principals = principals.stream().map(Glob::exact).toList();
    this.groups = groups.stream().map(Glob::exact).toList();
    this.tenants = tenants.stream().map(Glob::exact).toList();
    this.authority = authority.stream().map(Glob::anyCase).toList();
  }

  /** A route's or a quota override's block. */
  public static MatchBlock of(MatchConfig match) {
    return new MatchBlock(match.principals(), match.groups(), match.tenants(), match.authority());
  }

  /** A block of identities alone (a policy rule's match, a grant's {@code to:}); an empty list is unset. */
  public static MatchBlock identities(
      List<String> principals, List<String> groups, List<String> tenants) {
    return new MatchBlock(principals, groups, tenants, List.of());
  }

  /** @param authority the {@code :authority} dialled, with or without a port; null or empty when unknown */
  public boolean takes(Principal p, String authority) {
    return takesIdentity(p.name(), p.groups(), p.tenant()) && takesAuthority(authority);
  }

  /** For a principal whose call's authority is unknown: a block that names one does not take it. */
  public boolean takes(Principal p) {
    return takes(p, null);
  }

  /** The identity of a principal held apart (as a policy's test cases hold it); the authority unknown. */
  public boolean takes(String name, List<String> groups, Optional<String> tenant) {
    return takesIdentity(name, groups, tenant) && takesAuthority(null);
  }

  private boolean takesIdentity(String name, List<String> groups, Optional<String> tenant) {
    return (principals.isEmpty() || any(principals, name))
        && (this.groups.isEmpty() || anyGroup(groups))
        && (tenants.isEmpty() || any(tenants, tenant.orElse(null)));
  }

  private boolean takesAuthority(String dialled) {
    if (authority.isEmpty()) return true;
    if (dialled == null || dialled.isEmpty()) return false;
    return any(authority, dialled) || any(authority, withoutPort(dialled));
  }

  private boolean anyGroup(List<String> names) {
    for (int i = 0; i < names.size(); i++) {
      if (any(groups, names.get(i))) return true;
    }
    return false;
  }

  private static boolean any(List<Glob> globs, String value) {
    for (int i = 0; i < globs.size(); i++) {
      if (globs.get(i).matches(value)) return true;
    }
    return false;
  }

  /** {@code host} of {@code host:port} (and of {@code [v6]:port}), so that a pattern need not name a port. */
  static String withoutPort(String authority) {
    int colon = authority.lastIndexOf(':');
    if (colon <= 0 || colon == authority.length() - 1) return null;
    for (int i = colon + 1; i < authority.length(); i++) {
      if (!Character.isDigit(authority.charAt(i))) return null;
    }
    boolean bracketed = authority.charAt(0) == '[' && authority.charAt(colon - 1) == ']';
    if (!bracketed && authority.indexOf(':') != colon) return null; // a bare IPv6 address, no port
    return authority.substring(0, colon);
  }
}
