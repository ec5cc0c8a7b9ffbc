package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * Quotas ({@code quotas:}): limits per principal and per tenant, with overrides for whom a match takes (the
 * first matching override's limits replace the ones it sets; the rest stay).
 *
 * @param operationLease how long a concurrent-operation count outlives the last sign of its operation (a
 *     stream open on some replica); what a crashed replica's counts last at most
 */
public record QuotasConfig(
    Limits perPrincipal,
    Limits perTenant,
    List<OverrideLimits> overrides,
    Duration operationLease) {

  /** No quotas: every limit unset. */
  public static QuotasConfig none() {
    return new QuotasConfig(Limits.NONE, Limits.NONE, List.of(), Duration.ofMinutes(1));
  }

  public QuotasConfig {
    overrides = List.copyOf(overrides);
  }

  public boolean enabled() {
    return !perPrincipal.equals(Limits.NONE)
        || !perTenant.equals(Limits.NONE)
        || overrides.stream()
            .anyMatch(
                o -> !o.perPrincipal().equals(Limits.NONE) || !o.perTenant().equals(Limits.NONE));
  }

  /**
   * One set of limits; unset means unlimited.
   *
   * @param requestsPerSecond the token bucket's refill rate, in requests (of any RPC) a second
   * @param burst the bucket's size; defaults to twice the rate
   * @param maxPlanBytes the largest request message (a plan, an SQL text, an artifact chunk)
   */
  public record Limits(
      OptionalInt concurrentOperations,
      OptionalInt requestsPerSecond,
      OptionalInt burst,
      OptionalLong maxPlanBytes) {
    public static final Limits NONE =
        new Limits(
            OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty(), OptionalLong.empty());

    /** These limits with the ones {@code over} sets replacing them. */
    public Limits with(Limits over) {
      return new Limits(
          over.concurrentOperations.isPresent() ? over.concurrentOperations : concurrentOperations,
          over.requestsPerSecond.isPresent() ? over.requestsPerSecond : requestsPerSecond,
          over.burst.isPresent() ? over.burst : burst,
          over.maxPlanBytes.isPresent() ? over.maxPlanBytes : maxPlanBytes);
    }

    /** The bucket size in force: {@code burst}, or twice the rate. */
    public OptionalInt effectiveBurst() {
      if (burst.isPresent()) return burst;
      return requestsPerSecond.isPresent()
          ? OptionalInt.of(Math.max(1, 2 * requestsPerSecond.getAsInt()))
          : OptionalInt.empty();
    }

    static Limits read(YamlNode node, boolean planBytes) {
      if (planBytes) {
        node.allowOnly("concurrent_operations", "requests_per_second", "burst", "max_plan_bytes");
      } else {
        node.allowOnly("concurrent_operations", "requests_per_second", "burst");
      }
      Limits l =
          new Limits(
              optInt(node, "concurrent_operations"),
              optInt(node, "requests_per_second"),
              optInt(node, "burst"),
              node.has("max_plan_bytes")
                  ? OptionalLong.of(node.bytes("max_plan_bytes", 0, 1, Long.MAX_VALUE))
                  : OptionalLong.empty());
      return l;
    }

    /**
     * Checks the limits in force where {@code node} (a section or an override's) sets {@code set}: an
     * override may set a burst for the general rate, or a rate whose burst is the general one.
     */
    static void check(YamlNode node, Limits set, Limits inForce, boolean override) {
      String where = override ? " (with the general per_* limits this override keeps)" : "";
      if (inForce.burst.isPresent() && inForce.requestsPerSecond.isEmpty()) {
        throw node.errorAt(
            "burst", "needs requests_per_second" + where + ": the burst is the rate's bucket");
      }
      if (inForce.burst.isPresent()
          && inForce.burst.getAsInt() < inForce.requestsPerSecond.getAsInt()) {
        String key =
            set.burst.isPresent() || set.requestsPerSecond.isEmpty()
                ? "burst"
                : "requests_per_second";
        throw node.errorAt(
            key,
            "burst ("
                + inForce.burst.getAsInt()
                + ") must be at least requests_per_second ("
                + inForce.requestsPerSecond.getAsInt()
                + ")"
                + where);
      }
    }

    private static OptionalInt optInt(YamlNode node, String key) {
      return node.has(key)
          ? OptionalInt.of(node.integer(key, 0, 1, 1_000_000_000))
          : OptionalInt.empty();
    }
  }

  /** Limits for whom {@code match} takes, replacing the general ones they set. */
  public record OverrideLimits(MatchConfig match, Limits perPrincipal, Limits perTenant) {}

  static QuotasConfig read(YamlNode node) {
    node.allowOnly("per_principal", "per_tenant", "overrides", "operation_lease");
    Limits perPrincipal = Limits.read(node.section("per_principal"), true);
    Limits perTenant = Limits.read(node.section("per_tenant"), false);
    Limits.check(node.section("per_principal"), perPrincipal, perPrincipal, false);
    Limits.check(node.section("per_tenant"), perTenant, perTenant, false);
    List<OverrideLimits> overrides = new ArrayList<>();
    for (YamlNode o : node.sectionList("overrides")) {
      o.allowOnly("match", "per_principal", "per_tenant");
      if (!o.has("match")) throw o.errorAt("match", "is required: whom the override is for");
      if (!o.has("per_principal") && !o.has("per_tenant")) {
        throw o.error("sets no limits: add per_principal or per_tenant");
      }
      Limits principal = Limits.read(o.section("per_principal"), true);
      Limits tenant = Limits.read(o.section("per_tenant"), false);
      Limits.check(o.section("per_principal"), principal, perPrincipal.with(principal), true);
      Limits.check(o.section("per_tenant"), tenant, perTenant.with(tenant), true);
      overrides.add(new OverrideLimits(MatchConfig.read(o.section("match")), principal, tenant));
    }
    return new QuotasConfig(
        perPrincipal,
        perTenant,
        overrides,
        node.duration(
            "operation_lease", Duration.ofMinutes(1), Duration.ofSeconds(5), Duration.ofHours(1)));
  }
}
