package io.sparkgate.quota;

import static io.sparkgate.quota.QuotaCalls.limits;
import static io.sparkgate.quota.QuotaCalls.open;
import static io.sparkgate.quota.QuotaCalls.principal;
import static io.sparkgate.quota.QuotaCalls.quotas;
import static io.sparkgate.quota.QuotaCalls.uuid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.grpc.Status;
import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.config.MatchConfig;
import io.sparkgate.config.QuotasConfig;
import io.sparkgate.config.QuotasConfig.Limits;
import io.sparkgate.forward.CallHook;
import io.sparkgate.proto.spark.AddArtifactsRequest;
import io.sparkgate.testing.FakeTime;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** requests_per_second and burst: one token per call, per principal and per tenant, on a fake clock. */
final class RateQuotaTest {
  private final FakeTime time = new FakeTime();
  private final String session = uuid();

  private QuotaStage stage(Limits perPrincipal, Limits perTenant) {
    return QuotaStage.unscheduled(
        quotas(perPrincipal, perTenant, Duration.ofMinutes(1)), Optional.empty(), time);
  }

  private static Call call(String method, Principal who) {
    Call call = Call.of(method);
    call.principal(who);
    return call;
  }

  private Status.Code config(QuotaStage stage, Principal who) throws Exception {
    var e = open(stage, "Config", who).refused(QuotaCalls.configRequest(who, session));
    return e == null ? Status.Code.OK : e.getStatus().getCode();
  }

  @Test
  void aBurstIsAdmitted_thenOneCallPerToken_asTheBucketRefills() throws Exception {
    QuotaStage stage = stage(limits(0, 2, 4, 0), Limits.NONE);
    Principal alice = principal("alice", null);
    for (int i = 0; i < 4; i++) assertEquals(Status.Code.OK, config(stage, alice), "call " + i);
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, config(stage, alice));

    time.advance(Duration.ofMillis(499));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, config(stage, alice), "not a whole token yet");
    time.advance(Duration.ofMillis(1));
    assertEquals(Status.Code.OK, config(stage, alice));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, config(stage, alice));

    time.advance(Duration.ofMinutes(5)); // refills to the burst, not beyond
    for (int i = 0; i < 4; i++) assertEquals(Status.Code.OK, config(stage, alice));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, config(stage, alice));
    assertEquals(4L, stage.refusals().get("per_principal.requests_per_second"));
  }

  @Test
  void theBurstDefaultsToTwiceTheRate() throws Exception {
    QuotaStage stage = stage(limits(0, 3, 0, 0), Limits.NONE);
    Principal alice = principal("alice", null);
    for (int i = 0; i < 6; i++) assertEquals(Status.Code.OK, config(stage, alice));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, config(stage, alice));
  }

  @Test
  void aStreamTakesOneToken_atItsFirstMessage() throws Exception {
    QuotaStage stage = stage(limits(0, 1, 1, 0), Limits.NONE);
    Principal alice = principal("alice", null);
    byte[] chunk = AddArtifactsRequest.newBuilder().setSessionId(session).build().toByteArray();
    var upload = open(stage, "AddArtifacts", alice);
    for (int i = 0; i < 10; i++) upload.send(chunk);
    upload.close(Status.OK);
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, config(stage, alice), "the bucket held one");
  }

  @Test
  void theTenantsBucket_isSharedByItsPrincipals_andOtherTenantsAreUnaffected() throws Exception {
    QuotaStage stage = stage(Limits.NONE, limits(0, 1, 3, 0));
    Principal alice = principal("alice", "acme");
    Principal bob = principal("bob", "acme");
    Principal carol = principal("carol", "globex");
    Principal loner = principal("dave", null);
    assertEquals(Status.Code.OK, config(stage, alice));
    assertEquals(Status.Code.OK, config(stage, bob));
    assertEquals(Status.Code.OK, config(stage, alice));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, config(stage, bob));
    assertEquals(1L, stage.refusals().get("per_tenant.requests_per_second"));
    for (int i = 0; i < 3; i++) assertEquals(Status.Code.OK, config(stage, carol));
    // No tenant: per_tenant limits do not apply, and the call is not even looked at.
    assertSame(CallHook.PASS_THROUGH, stage.open(call("Config", loner)));
  }

  @Test
  void aCallRefusedByTheTenant_givesThePrincipalsTokenBack() throws Exception {
    QuotaStage stage = stage(limits(0, 1, 2, 0), limits(0, 1, 1, 0));
    Principal alice = principal("alice", "acme");
    Principal bob = principal("bob", "acme");
    assertEquals(Status.Code.OK, config(stage, bob)); // the tenant's one token
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, config(stage, alice));
    time.advance(Duration.ofSeconds(1)); // one tenant token again; alice still has both of hers
    assertEquals(Status.Code.OK, config(stage, alice));
    time.advance(Duration.ofSeconds(1));
    assertEquals(Status.Code.OK, config(stage, alice));
  }

  @Test
  void otherPrincipals_haveBucketsOfTheirOwn() throws Exception {
    QuotaStage stage = stage(limits(0, 1, 1, 0), Limits.NONE);
    Principal alice = principal("alice", null);
    assertEquals(Status.Code.OK, config(stage, alice));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, config(stage, alice));
    for (String name : new String[] {"bob", "carol", "dave"}) {
      assertEquals(Status.Code.OK, config(stage, principal(name, null)), name);
    }
  }

  @Test
  void callsThatEndWork_mayBorrowOneBurst() throws Exception {
    QuotaStage stage = stage(limits(0, 1, 2, 0), Limits.NONE);
    Principal alice = principal("alice", null);
    String op = uuid();
    assertEquals(Status.Code.OK, config(stage, alice));
    assertEquals(Status.Code.OK, config(stage, alice));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, config(stage, alice));
    // A client at its rate can still release and interrupt what it started, up to one burst ahead.
    assertNull(
        open(stage, "ReleaseExecute", alice).refused(QuotaCalls.releaseAll(alice, session, op)));
    assertNull(
        open(stage, "Interrupt", alice).refused(QuotaCalls.interruptOperation(alice, session, op)));
    assertNotNull(
        open(stage, "ReleaseSession", alice).refused(QuotaCalls.releaseSession(alice, session)));
    time.advance(Duration.ofSeconds(2)); // the debt is paid back before anything else is admitted
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, config(stage, alice));
    time.advance(Duration.ofSeconds(1));
    assertEquals(Status.Code.OK, config(stage, alice));
  }

  @Test
  void aPrincipalWithoutLimits_isNotLookedAt() throws Exception {
    QuotasConfig cfg =
        new QuotasConfig(
            Limits.NONE,
            Limits.NONE,
            List.of(
                QuotaCalls.override(
                    new MatchConfig(List.of("batch-*"), List.of(), List.of(), List.of()),
                    limits(0, 1, 1, 0),
                    Limits.NONE)),
            Duration.ofMinutes(1));
    QuotaStage stage = QuotaStage.unscheduled(cfg, Optional.empty(), time);
    assertSame(CallHook.PASS_THROUGH, stage.open(call("Config", principal("alice", "acme"))));
    assertEquals(Status.Code.OK, config(stage, principal("batch-7", null)));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, config(stage, principal("batch-7", null)));
  }
}
