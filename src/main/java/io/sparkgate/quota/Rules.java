package io.sparkgate.quota;

import io.sparkgate.call.Call;
import io.sparkgate.call.MatchBlock;
import io.sparkgate.call.Principal;
import io.sparkgate.config.QuotasConfig;
import io.sparkgate.config.QuotasConfig.OverrideLimits;
import java.util.List;

/**
 * Which limits a principal gets: the general ones, or those of the first override whose match takes it, each
 * override's budget compiled when the configuration is read. Finding it allocates nothing unless some
 * override matches on the authority.
 */
final class Rules {
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
      overrides[i] = new Special(MatchBlock.of(o.match()), budget);
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
      if (o.match.takes(principal, authority)) return o.budget;
    }
    return general;
  }

  /** The host the client dialled ({@code :authority}); null when the transport did not say. */
  private static String authority(Call call) {
    String authority = call.authority();
    return authority.isEmpty() ? null : authority;
  }

  /** One override: its match compiled, and the limits it gives. */
  private record Special(MatchBlock match, Budget budget) {}
}
