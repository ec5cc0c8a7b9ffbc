package io.sparkgate.policy;

import java.util.List;

/**
 * Who and what a rule applies to: RPC names, principal, groups (any of), tenant; and exemptions by group or
 * principal. A null matcher places no restriction.
 */
record Match(
    StringMatcher rpc,
    StringMatcher principal,
    StringMatcher groups,
    StringMatcher tenant,
    StringMatcher exceptGroups,
    StringMatcher exceptPrincipals) {

  static final Match ALL = new Match(null, null, null, null, null, null);

  boolean matches(EvalInput in) {
    if (rpc != null && !rpc.matches(in.rpc())) return false;
    if (principal != null && !principal.matches(in.principal())) return false;
    if (groups != null && !anyGroup(groups, in.groups())) return false;
    if (tenant != null && !tenant.matches(in.tenant())) return false;
    if (exceptGroups != null && anyGroup(exceptGroups, in.groups())) return false;
    return exceptPrincipals == null || !exceptPrincipals.matches(in.principal());
  }

  private static boolean anyGroup(StringMatcher m, List<String> groups) {
    for (String g : groups) if (m.matches(g)) return true;
    return false;
  }
}
