package io.sparkgate.quota;

/** Each limit a call can run into, by the name the configuration gives it (and errors, audit and metrics). */
enum Quota {
  PRINCIPAL_PLAN_BYTES("per_principal.max_plan_bytes", "principal"),
  PRINCIPAL_RATE("per_principal.requests_per_second", "principal"),
  TENANT_RATE("per_tenant.requests_per_second", "tenant"),
  PRINCIPAL_OPERATIONS("per_principal.concurrent_operations", "principal"),
  TENANT_OPERATIONS("per_tenant.concurrent_operations", "tenant");

  private final String label;
  private final String scope;

  Quota(String label, String scope) {
    this.label = label;
    this.scope = scope;
  }

  /** {@code per_principal.concurrent_operations}. */
  String label() {
    return label;
  }

  /** {@code principal} or {@code tenant}: whose count it is. */
  String scope() {
    return scope;
  }
}
