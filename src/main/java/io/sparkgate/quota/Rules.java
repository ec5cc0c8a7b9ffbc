package io.sparkgate.quota;

import io.grpc.Metadata;
import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.config.MatchConfig;
import io.sparkgate.config.QuotasConfig;
import io.sparkgate.config.QuotasConfig.OverrideLimits;
import java.util.List;

/**
 * Which limits a principal gets: the general ones, or those of the first override whose match takes it, each
 * override's budget compiled when the configuration is read. Finding it allocates nothing unless some
 * override matches on the authority.
 */
final class Rules {
  private static final Metadata.Key<String> HOST =
      Metadata.Key.of("host", Metadata.ASCII_STRING_MARSHALLER);

  private final Budget general;
  private final Special[] overrides;
  private final boolean readsAuthority;
  private final boolean limitsAnyone;

  Rules(QuotasConfig config) {
    this.general = Budget.of(config.perPrincipal(), config.perTenant());
    List<OverrideLimits> list = config.overrides();
    this.overrides = new Special[list.size()];
    boolean authority = false;
    boolean any = general.limitsPrincipal() || general.limitsTenant();
    for (int i = 0; i < overrides.length; i++) {
      OverrideLimits o = list.get(i);
      Budget budget =
          Budget.of(
              config.perPrincipal().with(o.perPrincipal()), config.perTenant().with(o.perTenant()));
      overrides[i] = new Special(o.match(), budget);
      authority |= !o.match().authority().isEmpty();
      any |= budget.limitsPrincipal() || budget.limitsTenant();
    }
    this.readsAuthority = authority;
    this.limitsAnyone = any;
  }

  /** False when no principal has any limit: the stage then lets every call through untouched. */
  boolean limitsAnyone() {
    return limitsAnyone;
  }

  Budget budget(Principal principal, Call call) {
    String authority = readsAuthority ? authority(call) : null;
    for (Special o : overrides) {
      if (o.takes(principal, authority)) return o.budget;
    }
    return general;
  }

  /** The host the client dialled ({@code :authority}); null when the transport did not say. */
  static String authority(Call call) {
    String authority = call.authority();
    return authority.isEmpty() ? null : authority;
  }

  /** One override, its globs compiled. */
  private static final class Special {
    private final Glob[] principals;
    private final Glob[] groups;
    private final Glob[] tenants;
    private final Glob[] authority;
    private final Budget budget;

    Special(MatchConfig match, Budget budget) {
      this.principals = Glob.all(match.principals());
      this.groups = Glob.all(match.groups());
      this.tenants = Glob.all(match.tenants());
      this.authority = Glob.all(match.authority());
      this.budget = budget;
    }

    /** Every list that is set must match; groups match when any of the principal's groups does. */
    boolean takes(Principal p, String dialled) {
      if (principals.length > 0 && !Glob.any(principals, p.name())) return false;
      if (groups.length > 0 && !anyGroup(p.groups())) return false;
      if (tenants.length > 0 && !Glob.any(tenants, p.tenant().orElse(null))) return false;
      return authority.length == 0
          || Glob.any(authority, dialled)
          || Glob.any(authority, withoutPort(dialled));
    }

    private boolean anyGroup(List<String> names) {
      for (int i = 0; i < names.size(); i++) {
        if (Glob.any(groups, names.get(i))) return true;
      }
      return false;
    }
  }

  /** {@code host} of {@code host:port} (and of {@code [v6]:port}), so that a pattern need not name the port. */
  static String withoutPort(String authority) {
    if (authority == null) return null;
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
