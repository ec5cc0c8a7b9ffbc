package io.sparkgate.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class CallEvidenceTest {
  private static Map<String, Object> fields(CallEvidence evidence) {
    Map<String, Object> fields = new LinkedHashMap<>();
    evidence.forEachField(fields::put);
    return fields;
  }

  @Test
  void fields_keepTheOrderFirstSet_withTheirLatestValue() {
    CallEvidence e = new CallEvidence();
    e.put("principal", "alice");
    e.put("decision", "allow");
    e.put("principal", "bob");
    e.putIfAbsent("decision", "deny");
    e.putIfAbsent("tenant", "t1");

    assertEquals(List.of("principal", "decision", "tenant"), List.copyOf(fields(e).keySet()));
    assertEquals(Map.of("principal", "bob", "decision", "allow", "tenant", "t1"), fields(e));
    assertEquals("bob", e.get("principal"));
    assertNull(e.get("absent"));
  }

  @Test
  @SuppressWarnings("unchecked")
  void listFields_collectInOrder_andTheRecordGetsACopy() {
    CallEvidence e = new CallEvidence();
    e.add("audit_rules", "a");
    e.put("rpc", "ExecutePlan");
    e.add("audit_rules", "b");
    e.add("audit_rules", "a"); // already there

    Map<String, Object> first = fields(e);
    e.add("audit_rules", "c");

    assertEquals(List.of("audit_rules", "rpc"), List.copyOf(first.keySet()));
    assertEquals(List.of("a", "b"), first.get("audit_rules"));
    assertEquals(List.of("a", "b", "c"), fields(e).get("audit_rules"));
    assertThrows(UnsupportedOperationException.class, () -> ((List<Object>) first.get("audit_rules")).add("x"));
  }

  @Test
  void deferredValues_areComputedWhenRead_andAPutReplacesThem() {
    CallEvidence e = new CallEvidence();
    AtomicInteger computed = new AtomicInteger();
    e.putLater("plan_summary", () -> "summary " + computed.incrementAndGet());
    assertEquals(0, computed.get());
    assertEquals("summary 1", fields(e).get("plan_summary"));

    e.put("plan_summary", "given");
    assertEquals("given", fields(e).get("plan_summary"));
    assertEquals(1, computed.get());
  }

  @Test
  void manyFields_grow_andNullsAndSealedPutsAreIgnored() {
    CallEvidence e = new CallEvidence();
    for (int i = 0; i < 100; i++) {
      e.put("f" + i, i);
    }
    e.put("null", null);
    e.seal();
    e.put("late", "x");
    e.add("f1", "x");

    Map<String, Object> fields = fields(e);
    assertEquals(100, fields.size());
    assertEquals(99, fields.get("f99"));
    assertEquals(1, fields.get("f1"));
  }

  @Test
  void aLongStream_settingTheSameFields_doesNotGrowTheEvidence() {
    CallEvidence e = new CallEvidence();
    e.put("rpc", "AddArtifacts");
    int slots = e.slots();
    for (int i = 0; i < 100_000; i++) {
      e.put("decision", i % 2 == 0 ? "allow" : "deny");
      e.put("plan_summary", i);
      e.putIfAbsent("rpc", "other");
      e.add("audit_rules", "r" + (i % 3));
    }
    assertEquals(slots, e.slots());
    Map<String, Object> fields = fields(e);
    assertEquals(List.of("rpc", "decision", "plan_summary", "audit_rules"), List.copyOf(fields.keySet()));
    assertEquals("deny", fields.get("decision"));
    assertEquals(99_999, fields.get("plan_summary"));
    assertEquals("AddArtifacts", fields.get("rpc"));
    assertEquals(List.of("r0", "r1", "r2"), fields.get("audit_rules"));
  }

  @Test
  void detachedEvidence_recordsNothing() {
    CallEvidence detached = CallEvidence.current(); // no call in progress
    detached.put("principal", "alice");
    detached.add("audit_rules", "a");
    assertEquals(Map.of(), fields(detached));
  }
}
