package io.sparkgate.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

final class PlanSummaryTest {
  private static final Fact REQUEST =
      new Fact(Fact.Kind.REQUEST, "ExecutePlan", Map.of("method", "ExecutePlan"));

  @Test
  void compressedPlan_isShownAsCompressed() {
    Fact compressed =
        new Fact(
            Fact.Kind.COMPRESSED_PLAN,
            "zstd",
            Map.of("op_type", "relation", "compressed_bytes", "40", "inflated_bytes", "120"));

    Map<String, Object> summary =
        new PlanSummary(false).add(Facts.of(List.of(REQUEST, compressed))).toMap();

    assertEquals(true, summary.get("compressed"), summary.toString());
    assertEquals(List.of("rpc:ExecutePlan"), summary.get("kinds"));
  }

  @Test
  void plainPlan_hasNoCompressedField() {
    Map<String, Object> summary = new PlanSummary(false).add(Facts.of(List.of(REQUEST))).toMap();

    assertFalse(summary.containsKey("compressed"), summary.toString());
  }
}
