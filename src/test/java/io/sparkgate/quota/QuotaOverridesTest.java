package io.sparkgate.quota;

import static io.sparkgate.quota.QuotaCalls.execute;
import static io.sparkgate.quota.QuotaCalls.limits;
import static io.sparkgate.quota.QuotaCalls.open;
import static io.sparkgate.quota.QuotaCalls.override;
import static io.sparkgate.quota.QuotaCalls.principal;
import static io.sparkgate.quota.QuotaCalls.uuid;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sparkgate.call.Principal;
import io.sparkgate.config.MatchConfig;
import io.sparkgate.config.QuotasConfig;
import io.sparkgate.config.QuotasConfig.Limits;
import io.sparkgate.testing.FakeTime;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Overrides: the first whose match takes the principal replaces the limits it sets. */
final class QuotaOverridesTest {
  private final FakeTime time = new FakeTime();
  private final String session = uuid();

  private static MatchConfig match(
      List<String> principals, List<String> groups, List<String> tenants, List<String> authority) {
    return new MatchConfig(principals, groups, tenants, authority);
  }

  /** How many operations {@code who} may run at once (up to 50), through a host header if given. */
  private int operations(QuotaStage stage, Principal who, String host) throws Exception {
    for (int n = 0; n < 50; n++) {
      var call = open(stage, "ExecutePlan", who, host);
      if (call.refused(execute(who, session, uuid(), true)) != null) return n;
    }
    return 50;
  }

  @Test
  void theFirstMatchingOverride_replacesWhatItSets_andKeepsTheRest() throws Exception {
    QuotasConfig config =
        new QuotasConfig(
            limits(2, 100, 0, 1000),
            Limits.NONE,
            List.of(
                override(
                    match(List.of(), List.of("etl"), List.of(), List.of()),
                    limits(5, 0, 0, 0),
                    Limits.NONE),
                override(
                    match(List.of("svc-*"), List.of(), List.of(), List.of()),
                    limits(9, 0, 0, 0),
                    Limits.NONE)),
            Duration.ofMinutes(1));
    QuotaStage stage = QuotaStage.unscheduled(config, Optional.empty(), time);
    assertEquals(2, operations(stage, principal("alice", null, "analysts"), null));
    assertEquals(5, operations(stage, principal("bob", null, "analysts", "etl"), null));
    assertEquals(5, operations(stage, principal("svc-etl", null, "etl"), null), "the first wins");
    assertEquals(9, operations(stage, principal("svc-report", null), null));
    // max_plan_bytes was not overridden: it still applies to the override's principals.
    var big = open(stage, "Config", principal("bob2", null, "etl"));
    assertEquals(
        "per_principal.max_plan_bytes",
        QuotaErrors.parameters(big.refused(new byte[1001])).get("quota"));
  }

  @Test
  void everyListThatIsSet_mustMatch() throws Exception {
    QuotasConfig config =
        new QuotasConfig(
            limits(1, 0, 0, 0),
            Limits.NONE,
            List.of(
                override(
                    match(List.of("a*"), List.of("etl"), List.of("acme"), List.of()),
                    limits(3, 0, 0, 0),
                    Limits.NONE)),
            Duration.ofMinutes(1));
    QuotaStage stage = QuotaStage.unscheduled(config, Optional.empty(), time);
    assertEquals(3, operations(stage, principal("alice", "acme", "etl"), null));
    assertEquals(1, operations(stage, principal("bob", "acme", "etl"), null));
    assertEquals(1, operations(stage, principal("anna", "globex", "etl"), null));
    assertEquals(1, operations(stage, principal("abe", "acme", "analysts"), null));
    assertEquals(1, operations(stage, principal("ada", null, "etl"), null), "no tenant to match");
    assertEquals(1, operations(stage, principal("alex", "ACME", "etl"), null), "exactly: case too");
  }

  @Test
  void anOverrideOnTheAuthority_readsTheHostTheClientDialled() throws Exception {
    QuotasConfig config =
        new QuotasConfig(
            limits(1, 0, 0, 0),
            Limits.NONE,
            List.of(
                override(
                    match(List.of(), List.of(), List.of(), List.of("batch.spark.example.com")),
                    limits(4, 0, 0, 0),
                    Limits.NONE)),
            Duration.ofMinutes(1));
    QuotaStage stage = QuotaStage.unscheduled(config, Optional.empty(), time);
    assertEquals(4, operations(stage, principal("a", null), "batch.spark.example.com:443"));
    assertEquals(4, operations(stage, principal("b", null), "BATCH.spark.example.com"));
    assertEquals(1, operations(stage, principal("c", null), "spark.example.com:443"));
    assertEquals(1, operations(stage, principal("d", null), null), "unknown: no override");
  }

  @Test
  void perTenantOverrides_applyToThePrincipalsTheyMatch() throws Exception {
    QuotasConfig config =
        new QuotasConfig(
            Limits.NONE,
            limits(1, 0, 0, 0),
            List.of(
                override(
                    match(List.of(), List.of(), List.of("big-*"), List.of()),
                    Limits.NONE,
                    limits(3, 0, 0, 0))),
            Duration.ofMinutes(1));
    QuotaStage stage = QuotaStage.unscheduled(config, Optional.empty(), time);
    assertEquals(3, operations(stage, principal("alice", "big-corp"), null));
    assertEquals(1, operations(stage, principal("bob", "small-corp"), null));
  }
}
