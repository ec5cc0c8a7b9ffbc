package io.sparkgate.call;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AuditEventTest {
  @Test
  void rulesCollectInOrder_eachOnce_andTheSealedEventIsACopy() {
    AuditEvent e = Call.of("ExecutePlan").audit();
    e.auditRule("a");
    e.auditRule("b");
    e.auditRule("a"); // already there
    e.shadowDecision("s:deny");

    AuditEvent.Sealed sealed = e.seal();
    e.auditRule("c"); // after the end of the call

    assertEquals(List.of("a", "b"), sealed.auditRules());
    assertEquals(List.of("s:deny"), sealed.shadowDecisions());
    assertThrows(UnsupportedOperationException.class, () -> sealed.auditRules().add("x"));
    assertEquals(List.of("a", "b"), e.seal().auditRules());
  }

  @Test
  void thePlanSummary_isComputedOnlyWhenRead_andALaterOneReplacesIt() {
    AuditEvent e = Call.of("ExecutePlan").audit();
    AtomicInteger computed = new AtomicInteger();
    e.planSummary(() -> Map.of("summary", computed.incrementAndGet()));
    assertEquals(0, computed.get());
    assertEquals(Map.of("summary", 1), e.seal().planSummary().get());

    AuditEvent later = Call.of("ExecutePlan").audit();
    later.planSummary(() -> Map.of("summary", "first"));
    later.planSummary(() -> Map.of("summary", "given"));
    assertEquals(Map.of("summary", "given"), later.seal().planSummary().get());
  }

  @Test
  void whatIsRecordedAfterTheCallEnded_isIgnored() {
    AuditEvent e = Call.of("ExecutePlan").audit();
    e.refusal("rule r: no");
    e.quota("per_principal.concurrent_operations");
    e.seal();
    e.refusal("late");
    e.quota("per_tenant.requests_per_second");
    e.authFailure("late");
    e.rewrite(new AuditEvent.Rewrite("r", "w", "late"));
    e.planSummary(() -> Map.of());

    AuditEvent.Sealed sealed = e.seal();
    assertEquals("rule r: no", sealed.refusal());
    assertEquals("per_principal.concurrent_operations", sealed.quota());
    assertNull(sealed.authFailure());
    assertEquals(List.of(), sealed.rewrites());
    assertNull(sealed.planSummary());
  }

  @Test
  void aLongStream_recordingTheSameThings_keepsOneEntryEach() {
    AuditEvent e = Call.of("AddArtifacts").audit();
    for (int i = 0; i < 100_000; i++) {
      e.auditRule("r" + (i % 3));
      e.shadowDecision("s");
      e.rewrite(new AuditEvent.Rewrite("r", "w", "same change"));
      int n = i;
      e.planSummary(() -> Map.of("n", n));
    }
    AuditEvent.Sealed sealed = e.seal();
    assertEquals(List.of("r0", "r1", "r2"), sealed.auditRules());
    assertEquals(List.of("s"), sealed.shadowDecisions());
    assertEquals(1, sealed.rewrites().size());
    assertEquals(Map.of("n", 99_999), sealed.planSummary().get());
  }
}
