package io.sparkgate.quota;

import io.sparkgate.config.QuotasConfig.Limits;

/**
 * The limits in force for one principal and its tenant, compiled once from the configuration into plain
 * numbers (0: unlimited) so that the call path reads fields rather than unwrapping optionals.
 */
record Budget(
    long maxPlanBytes,
    int principalOperations,
    int principalRate,
    int principalBurst,
    int tenantOperations,
    int tenantRate,
    int tenantBurst) {

  static final Budget NONE = new Budget(0, 0, 0, 0, 0, 0, 0);

  static Budget of(Limits principal, Limits tenant) {
    return new Budget(
        principal.maxPlanBytes().orElse(0),
        principal.concurrentOperations().orElse(0),
        principal.requestsPerSecond().orElse(0),
        principal.effectiveBurst().orElse(0),
        tenant.concurrentOperations().orElse(0),
        tenant.requestsPerSecond().orElse(0),
        tenant.effectiveBurst().orElse(0));
  }

  boolean limitsPrincipal() {
    return maxPlanBytes > 0 || principalOperations > 0 || principalRate > 0;
  }

  boolean limitsTenant() {
    return tenantOperations > 0 || tenantRate > 0;
  }

  /** Whether an ExecutePlan of a principal (with a tenant or not) takes a slot anywhere. */
  boolean countsOperations(boolean hasTenant) {
    return principalOperations > 0 || (hasTenant && tenantOperations > 0);
  }
}
