package io.sparkgate.policy;

import io.sparkgate.call.MatchBlock;
import java.util.Optional;

/**
 * Which calls a rule applies to: RPC names, whom its principal, groups and tenant take (read as routes and
 * quota overrides read theirs), less whom an exemption by principal or by group takes. A null {@code rpc} or
 * exemption places no restriction.
 */
record Match(
    StringMatcher rpc, MatchBlock who, MatchBlock exceptPrincipals, MatchBlock exceptGroups) {

  static final Match ALL = new Match(null, MatchBlock.ANYONE, null, null);

  boolean matches(EvalInput in) {
    if (rpc != null && !rpc.matches(in.rpc())) return false;
    // EvalInput writes a principal without a tenant as "": it has none to match.
    Optional<String> tenant = Optional.of(in.tenant()).filter(t -> !t.isEmpty());
    if (!who.takes(in.principal(), in.groups(), tenant)) return false;
    if (exceptGroups != null && exceptGroups.takes(in.principal(), in.groups(), tenant))
      return false;
    return exceptPrincipals == null || !exceptPrincipals.takes(in.principal(), in.groups(), tenant);
  }
}
