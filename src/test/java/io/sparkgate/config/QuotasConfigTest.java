package io.sparkgate.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.yaml.YamlNode;
import java.io.StringReader;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The {@code quotas:} section as operators write it, and the mistakes it refuses. */
final class QuotasConfigTest {
  private static QuotasConfig read(String yaml) {
    return QuotasConfig.read(
        YamlNode.parse("q.yaml", new StringReader(yaml), ConfigException::new).section("quotas"));
  }

  private static String error(String yaml) {
    return assertThrows(ConfigException.class, () -> read(yaml)).getMessage();
  }

  @Test
  void theDocumentedExample() {
    QuotasConfig q =
        read(
            """
            quotas:
              per_principal: {concurrent_operations: 8, requests_per_second: 50, burst: 100, max_plan_bytes: 16MiB}
              per_tenant:    {concurrent_operations: 64, requests_per_second: 500, burst: 1000}
              overrides:
                - match: {groups: [etl]}
                  per_principal: {concurrent_operations: 32}
              operation_lease: 1m
            """);
    assertEquals(OptionalInt.of(8), q.perPrincipal().concurrentOperations());
    assertEquals(OptionalLong.of(16L << 20), q.perPrincipal().maxPlanBytes());
    assertEquals(OptionalInt.of(1000), q.perTenant().burst());
    assertEquals(List.of("etl"), q.overrides().get(0).match().groups());
    assertEquals(
        OptionalInt.of(32),
        q.perPrincipal().with(q.overrides().get(0).perPrincipal()).concurrentOperations());
    assertEquals(Duration.ofMinutes(1), q.operationLease());
    assertTrue(q.enabled());
  }

  @Test
  void anOverride_mayRaiseTheBurstOfTheGeneralRate() {
    QuotasConfig q =
        read(
            """
            quotas:
              per_principal: {requests_per_second: 50}
              overrides:
                - match: {principals: [loader]}
                  per_principal: {burst: 500}
            """);
    assertEquals(
        OptionalInt.of(500), q.perPrincipal().with(q.overrides().get(0).perPrincipal()).burst());
  }

  @Test
  void aBurstWithoutARate_orBelowIt_isRefused_asItWouldBeInForce() {
    assertTrue(
        error("quotas:\n  per_principal: {burst: 5}\n")
            .contains("burst: needs requests_per_second"));
    assertTrue(
        error("quotas:\n  per_principal: {requests_per_second: 10, burst: 5}\n")
            .contains("burst (5) must be at least requests_per_second (10)"));
    String e =
        error(
            """
            quotas:
              per_principal: {requests_per_second: 10, burst: 20}
              overrides:
                - match: {groups: [etl]}
                  per_principal: {requests_per_second: 100}
            """);
    assertTrue(
        e.contains("requests_per_second: burst (20) must be at least requests_per_second (100)"),
        e);
    assertTrue(e.contains("with the general per_* limits this override keeps"), e);
  }

  @Test
  void theLease_hasAFloor() {
    assertTrue(error("quotas:\n  operation_lease: 1s\n").contains("operation_lease"));
  }
}
