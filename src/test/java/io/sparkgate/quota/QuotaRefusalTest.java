package io.sparkgate.quota;

import static io.sparkgate.quota.QuotaCalls.execute;
import static io.sparkgate.quota.QuotaCalls.limits;
import static io.sparkgate.quota.QuotaCalls.open;
import static io.sparkgate.quota.QuotaCalls.principal;
import static io.sparkgate.quota.QuotaCalls.quotas;
import static io.sparkgate.quota.QuotaCalls.uuid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.AuditEvent;
import io.sparkgate.call.Principal;
import io.sparkgate.config.QuotasConfig.Limits;
import io.sparkgate.proto.spark.AddArtifactsRequest;
import io.sparkgate.quota.QuotaCalls.Open;
import io.sparkgate.testing.FakeTime;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What a refused client sees (Spark's error shape) and what the audit record and the counters keep. */
final class QuotaRefusalTest {
  private final FakeTime time = new FakeTime();
  private final Principal alice = principal("alice", "acme");
  private final String session = uuid();

  @Test
  void aRateRefusal_isResourceExhausted_withErrorInfo_andWhenToRetry() throws Exception {
    QuotaStage stage =
        QuotaStage.unscheduled(
            quotas(limits(0, 4, 4, 0), Limits.NONE, Duration.ofMinutes(1)), Optional.empty(), time);
    for (int i = 0; i < 4; i++)
      open(stage, "Config", alice).send(QuotaCalls.configRequest(alice, session));
    time.advance(Duration.ofMillis(100)); // 0.4 of a token: the next in 150 ms
    Open call = open(stage, "Config", alice);
    StatusException e = call.refused(QuotaCalls.configRequest(alice, session));

    assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
    String text = e.getStatus().getDescription();
    assertTrue(
        text.startsWith("[SPARKGATE_QUOTA_EXCEEDED] Quota per_principal.requests_per_second"),
        text);
    assertTrue(text.contains("principal 'alice' may send 4 requests a second"), text);
    assertTrue(text.endsWith("SQLSTATE: 53400"), text);
    ErrorInfo info = QuotaErrors.errorInfo(e);
    assertEquals("org.apache.spark.SparkException", info.getReason());
    assertEquals("53400", info.getMetadataOrThrow("sqlState"));
    assertEquals(
        Map.of("quota", "per_principal.requests_per_second", "limit", "4", "scope", "principal"),
        QuotaErrors.parameters(e));
    assertEquals(Duration.ofMillis(150), QuotaErrors.retryDelay(e));

    AuditEvent.Sealed audit = call.call().audit().seal();
    assertEquals("per_principal.requests_per_second", audit.quota());
    assertEquals(text, audit.refusal());
  }

  @Test
  void aSlotRefusal_namesTheQuotaItsScopeAndLimit_andRetriesInASecond() throws Exception {
    QuotaStage stage =
        QuotaStage.unscheduled(
            quotas(Limits.NONE, limits(1, 0, 0, 0), Duration.ofMinutes(1)), Optional.empty(), time);
    open(stage, "ExecutePlan", principal("bob", "acme"))
        .send(execute(alice, session, uuid(), true));
    StatusException e =
        open(stage, "ExecutePlan", alice).refused(execute(alice, session, uuid(), true));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
    assertTrue(
        e.getStatus().getDescription().contains("tenant 'acme' already runs 1 operations at once"),
        e.getStatus().getDescription());
    assertEquals(
        Map.of("quota", "per_tenant.concurrent_operations", "limit", "1", "scope", "tenant"),
        QuotaErrors.parameters(e));
    assertEquals(Duration.ofSeconds(1), QuotaErrors.retryDelay(e));
    assertEquals(1L, stage.refusals().get("per_tenant.concurrent_operations"));
    assertEquals(0L, stage.refusals().get("per_principal.concurrent_operations"));
  }

  @Test
  void aRequestOverMaxPlanBytes_isRefused_whateverTheMethod_andNotWorthRetrying() throws Exception {
    QuotaStage stage =
        QuotaStage.unscheduled(
            quotas(limits(0, 0, 0, 1024), Limits.NONE, Duration.ofMinutes(1)),
            Optional.empty(),
            time);
    byte[] small = AddArtifactsRequest.newBuilder().setSessionId(session).build().toByteArray();
    byte[] large = new byte[1025];
    Open upload = open(stage, "AddArtifacts", alice);
    upload.send(small).send(new byte[1024]);
    StatusException e = upload.refused(large);
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
    String text = e.getStatus().getDescription();
    assertTrue(
        text.contains(
            "The request is 1025 bytes, more than quota per_principal.max_plan_bytes allows (1024 bytes)"),
        text);
    assertTrue(text.endsWith("SQLSTATE: 54000"), text);
    assertNull(QuotaErrors.retryDelay(e));
    assertEquals(
        Map.of("quota", "per_principal.max_plan_bytes", "limit", "1024", "scope", "principal"),
        QuotaErrors.parameters(e));
    assertEquals("per_principal.max_plan_bytes", upload.call().audit().seal().quota());

    StatusException plan = open(stage, "ExecutePlan", alice).refused(new byte[2048]);
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, plan.getStatus().getCode());
    assertEquals(2L, stage.refusals().get("per_principal.max_plan_bytes"));
  }

  @Test
  void refusals_areCountedByQuota_everyQuotaFromTheStart() {
    QuotaStage stage =
        QuotaStage.unscheduled(
            quotas(limits(1, 0, 0, 0), Limits.NONE, Duration.ofMinutes(1)), Optional.empty(), time);
    assertEquals(
        Map.of(
            "per_principal.max_plan_bytes", 0L,
            "per_principal.requests_per_second", 0L,
            "per_tenant.requests_per_second", 0L,
            "per_principal.concurrent_operations", 0L,
            "per_tenant.concurrent_operations", 0L),
        stage.refusals());
    assertFalse(stage.shared());
    assertEquals(0, stage.localFallbacks());
  }

  @Test
  void anAdmittedCall_recordsNoQuota() throws Exception {
    QuotaStage stage =
        QuotaStage.unscheduled(
            quotas(limits(1, 0, 0, 0), Limits.NONE, Duration.ofMinutes(1)), Optional.empty(), time);
    Open call = open(stage, "ExecutePlan", alice).send(execute(alice, session, uuid(), true));
    assertNull(call.call().audit().seal().quota());
  }

  @Test
  void whatTheStatusOfAStreamSaysOfItsOperation() {
    assertFalse(CallQuota.failed(Status.OK));
    assertFalse(CallQuota.failed(Status.CANCELLED));
    assertFalse(CallQuota.failed(Status.UNAVAILABLE));
    assertFalse(
        CallQuota.failed(Status.INTERNAL.withDescription("[INVALID_CURSOR.DISCONNECTED] x")));
    assertTrue(CallQuota.failed(Status.INTERNAL));
    assertTrue(CallQuota.failed(Status.UNKNOWN.withDescription("[DIVIDE_BY_ZERO] x")));
    assertTrue(CallQuota.failed(Status.PERMISSION_DENIED));
  }
}
