package io.sparkgate.metrics;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.StatusException;
import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.config.QuotasConfig;
import io.sparkgate.config.QuotasConfig.Limits;
import io.sparkgate.quota.QuotaStage;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The quota stage's meters: refusals by quota (every quota from the start), slots held, sharing. */
final class QuotaMetricsTest {
  @Test
  void refusalsByQuota_heldOperations_andWhetherCountsAreShared() throws Exception {
    QuotasConfig config =
        new QuotasConfig(
            new Limits(
                OptionalInt.of(2), OptionalInt.empty(), OptionalInt.empty(), OptionalLong.of(10)),
            Limits.NONE,
            List.of(),
            Duration.ofMinutes(1));
    try (ProxyMetrics metrics = ProxyMetrics.create();
        QuotaStage quotas = QuotaStage.create(config, Optional.empty())) {
      metrics.watch(quotas);
      Call call = Call.of("ExecutePlan");
      call.principal(Principal.anonymous(Principal.Method.NONE));
      assertThrows(StatusException.class, () -> quotas.open(call).onRequest(new byte[11]));

      String scrape = metrics.scrape();
      assertTrue(
          scrape.contains(
              "sparkgate_quota_refusals_total{quota=\"per_principal.max_plan_bytes\"} 1.0"),
          scrape);
      assertTrue(
          scrape.contains(
              "sparkgate_quota_refusals_total{quota=\"per_tenant.concurrent_operations\"} 0.0"),
          scrape);
      assertTrue(scrape.contains("sparkgate_quota_operations_held 0.0"), scrape);
      assertTrue(scrape.contains("sparkgate_quota_shared 0.0"), scrape);
      assertTrue(scrape.contains("sparkgate_quota_local_fallbacks_total 0.0"), scrape);
      assertTrue(!scrape.contains("anonymous"), "no label carries a principal");
    }
  }
}
