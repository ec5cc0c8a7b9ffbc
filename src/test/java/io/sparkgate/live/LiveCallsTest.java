package io.sparkgate.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.call.Route;
import io.sparkgate.forward.CallHook;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.RequestHead;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.ReleaseSessionRequest;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.testing.FakeTime;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The live view kept from what the stages recorded: sessions, operations and refusals, bounded. */
final class LiveCallsTest {
  private static final String SESSION = "0d1c2b3a-0000-4000-8000-000000000001";
  private final FakeTime time = new FakeTime();
  private final LiveCalls live = new LiveCalls(time, Duration.ofMinutes(30));
  private final Inspector inspector = new Inspector();

  private static Principal alice() {
    return new Principal(
        "alice",
        List.of("analysts"),
        Optional.empty(),
        Principal.Method.STATIC_TOKEN,
        Optional.empty());
  }

  /** A call as the stages leave it when its first message is forwarded. */
  private CallHook forwarded(String method, byte[] message) {
    Call call = Call.of(method);
    call.principal(alice());
    CallHook hook = live.open(call);
    call.route(new Route("default", "127.0.0.1:15002"));
    call.head(RequestHead.read(method, message).withUserId(alice().name()));
    hook.onAccepted(message);
    return hook;
  }

  private static byte[] execute(String operationId) {
    return ExecutePlanRequest.newBuilder()
        .setSessionId(SESSION)
        .setUserContext(UserContext.newBuilder().setUserId("alice"))
        .setOperationId(operationId)
        .build()
        .toByteArray();
  }

  @Test
  void executePlan_isARunningOperation_untilItEnds_andItsSessionStays() {
    CallHook call = forwarded("ExecutePlan", execute("op-1"));
    time.advance(Duration.ofSeconds(5));
    LiveCalls.Operation op = live.operation("op-1").orElseThrow();
    assertEquals(SESSION, op.sessionId());
    assertEquals("alice", op.principal());
    assertEquals("127.0.0.1:15002", op.backend());
    assertEquals(1, live.sessions().get(0).runningOperations());

    call.onClose(Status.OK);
    assertEquals(List.of(), live.operations());
    assertEquals(0, live.sessions().get(0).runningOperations());
    assertEquals(List.of(), live.refusals(), "an answered call is no refusal");
  }

  @Test
  void releaseSession_dropsTheSession() {
    forwarded("ExecutePlan", execute("op-1")).onClose(Status.OK);
    assertEquals(1, live.sessions().size());
    byte[] release =
        ReleaseSessionRequest.newBuilder()
            .setSessionId(SESSION)
            .setUserContext(UserContext.newBuilder().setUserId("alice"))
            .build()
            .toByteArray();
    forwarded("ReleaseSession", release).onClose(Status.OK);
    assertEquals(List.of(), live.sessions());
  }

  @Test
  void idleSessions_expire_butNotWhileAnOperationRuns() {
    CallHook running = forwarded("ExecutePlan", execute("op-1"));
    time.advance(Duration.ofMinutes(31));
    assertEquals(1, live.sessions().size(), "busy: kept");
    running.onClose(Status.CANCELLED);
    assertEquals(List.of(), live.sessions(), "idle for longer than the timeout");
  }

  @Test
  void authenticationFailure_isARefusalOfAnUnknownPrincipal() {
    Call call = Call.of("ExecutePlan");
    CallHook hook = live.open(call);
    call.audit().authFailure("invalid_token");
    hook.onClose(Status.UNAUTHENTICATED);
    LiveCalls.Refusal r = live.refusals().get(0);
    assertEquals("authentication", r.kind());
    assertEquals("invalid_token", r.reason());
    assertNull(r.principal());
  }

  @Test
  void quotaRefusal_namesTheQuota() {
    Call call = Call.of("ExecutePlan");
    call.principal(alice());
    CallHook hook = live.open(call);
    call.audit().quota("per_principal.concurrent_operations");
    hook.onClose(Status.RESOURCE_EXHAUSTED);
    LiveCalls.Refusal r = live.refusals().get(0);
    assertEquals("quota", r.kind());
    assertEquals("per_principal.concurrent_operations", r.reason());
    assertEquals("alice", r.principal());
  }

  @Test
  void noRoute_isARefusal() {
    Call call = Call.of("ExecutePlan");
    call.principal(alice());
    CallHook hook = live.open(call);
    hook.onClose(Status.PERMISSION_DENIED); // the route stage refused before choosing a pool
    LiveCalls.Refusal r = live.refusals().get(0);
    assertEquals("route", r.kind());
    assertEquals("alice", r.principal());
  }

  @Test
  void otherFailures_areNotRefusals() {
    forwarded("ExecutePlan", execute("op-1")).onClose(Status.INTERNAL);
    assertEquals(List.of(), live.refusals());
  }

  @Test
  void refusals_keepTheLast200_newestFirst() {
    for (int i = 0; i < 250; i++) {
      Call call = Call.of("Config");
      call.principal(alice());
      CallHook hook = live.open(call);
      call.decided("deny", "rule-" + i);
      hook.onClose(Status.PERMISSION_DENIED);
    }
    List<LiveCalls.Refusal> kept = live.refusals();
    assertEquals(LiveCalls.MAX_REFUSALS, kept.size());
    assertEquals("rule-249", kept.get(0).reason());
    assertEquals("rule-50", kept.get(kept.size() - 1).reason());
    assertTrue(kept.stream().allMatch(r -> r.kind().equals("policy")));
  }
}
