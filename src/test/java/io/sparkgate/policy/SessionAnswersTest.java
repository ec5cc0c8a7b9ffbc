package io.sparkgate.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.benmanes.caffeine.cache.Ticker;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.Call;
import io.sparkgate.call.InspectStage;
import io.sparkgate.call.Pipeline;
import io.sparkgate.cli.CliPolicyCompiler;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import io.sparkgate.head.HeadStage;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionTracker;
import io.sparkgate.proto.spark.AnalyzePlanRequest;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.ExecutePlanResponse;
import io.sparkgate.proto.spark.Range;
import io.sparkgate.proto.spark.ReattachOptions;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.RelationCommon;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The shipped shared-server policy behind the inspect stage, with a fake backend that answers each call: the
 * session view changes only with Spark's successful answers, and Spark's shared cache may be dropped only by
 * the session that filled it.
 */
final class SessionAnswersTest {
  private static final BackendProfile PROFILE =
      new BackendProfile("4.0.0", List.of(), Map.of(), null);
  private static final Policy POLICY =
      CliPolicyCompiler.get().compile(Path.of("policies/shared-server.yaml"));
  private static final Status REFUSED_BY_SPARK =
      Status.INTERNAL.withDescription(
          "[SCHEMA_NOT_FOUND] The schema `no_such_db` cannot be found.");

  private final SessionTracker sessions =
      new SessionTracker(() -> PROFILE, Duration.ofMinutes(30), Ticker.systemTicker(), null);
  private final Pipeline stages =
      Pipeline.of(
          new HeadStage(AuthConfig.disabled()),
          InspectStage.full(new Inspector(), sessions),
          new DecideStage(
              new PolicyEngine(() -> POLICY, ProfileSource.fixed(PROFILE)), Map.of(), false));

  @Test
  void use_refusedBySpark_leavesTheViewUnchanged_andOrdinaryStatementsPass() throws Exception {
    sql("alice", "USE no_such_db", REFUSED_BY_SPARK);
    sql("alice", "USE global_temp", REFUSED_BY_SPARK);
    assertEquals("default", sessions.view("alice", TestRequest.SESSION).currentDatabase());
    sql("alice", "REFRESH TABLE t", Status.OK);
    sql("alice", "DESCRIBE FUNCTION abs", Status.OK);
    sql("alice", "CACHE TABLE c AS SELECT 1 AS a", Status.OK);
    // Had Spark taken the USE, the view would have followed it (and REFRESH TABLE t would then
    // name a global temporary view).
    sql("alice", "USE global_temp", Status.OK);
    assertEquals("global_temp", sessions.view("alice", TestRequest.SESSION).currentDatabase());
    assertRefused("no-global-temp-views", () -> sql("alice", "REFRESH TABLE t", Status.OK));
  }

  @Test
  void reattachableExecution_changesTheViewAtItsResultComplete_notAtAnEarlyOk() throws Exception {
    CallHook cut = open("ExecutePlan", reattachable(TestRequest.sql("USE sales", "alice")));
    cut.onResponse(
        Payload.of(ExecutePlanResponse.newBuilder().setResponseId("1").build().toByteArray()));
    close(cut, Status.OK); // the server cut the stream; the client would reattach
    assertEquals("default", sessions.view("alice", TestRequest.SESSION).currentDatabase());

    CallHook done = open("ExecutePlan", reattachable(TestRequest.sql("USE sales", "alice")));
    done.onResponse(
        Payload.of(
            ExecutePlanResponse.newBuilder()
                .setResultComplete(ExecutePlanResponse.ResultComplete.getDefaultInstance())
                .build()
                .toByteArray()));
    assertEquals(
        "sales",
        sessions.view("alice", TestRequest.SESSION).currentDatabase(),
        "known before the client sees the end");
    close(done, Status.OK);
  }

  /**
   * Spark registers a cache entry when CACHE TABLE starts and fills it for as long as the job runs; a second
   * session's CACHE TABLE meanwhile is a no-op answered at once. It must not become the owner.
   */
  @Test
  void cacheTable_whileAnotherSessionStillFillsTheCache_isNotTheSecondSessions() throws Exception {
    CallHook first = open("ExecutePlan", TestRequest.sql("CACHE TABLE sales.orders", "alice"));
    sql("bob", "CACHE TABLE sales.orders", Status.OK);
    assertRefused("no-shared-cache-ops", () -> sql("bob", "UNCACHE TABLE sales.orders", Status.OK));
    assertRefused(
        "no-shared-cache-ops",
        () -> sql("alice", "UNCACHE TABLE sales.orders", Status.OK),
        "not before Spark answered");
    close(first, Status.OK);
    sql("alice", "UNCACHE TABLE sales.orders", Status.OK);
  }

  /** A reattachable execution whose stream the server cut is answered on the client's ReattachExecute. */
  @Test
  void reattachExecute_bringsTheAnswerOfACutStream() throws Exception {
    CallHook cut =
        open("ExecutePlan", reattachable(TestRequest.sql("CACHE TABLE sales.orders", "alice")));
    close(cut, Status.OK);
    assertRefused(
        "no-shared-cache-ops", () -> sql("alice", "UNCACHE TABLE sales.orders", Status.OK));
    assertRefused(
        "no-shared-cache-ops",
        () -> sql("bob", "UNCACHE TABLE sales.orders", Status.OK),
        "still alice's reservation");
    CallHook reattach =
        open(
            "ReattachExecute",
            io.sparkgate.proto.spark.ReattachExecuteRequest.newBuilder()
                .setSessionId(TestRequest.SESSION)
                .setUserContext(TestRequest.user("alice"))
                .setOperationId(
                    ExecutePlanRequest.parseFrom(TestRequest.sql("x", "alice")).getOperationId())
                .build()
                .toByteArray());
    reattach.onResponse(
        Payload.of(
            ExecutePlanResponse.newBuilder()
                .setResultComplete(ExecutePlanResponse.ResultComplete.getDefaultInstance())
                .build()
                .toByteArray()));
    close(reattach, Status.OK);
    sql("alice", "UNCACHE TABLE sales.orders", Status.OK);
  }

  @Test
  void cacheTable_ofATableAnotherSessionCached_doesNotLetTheSecondSessionUncacheIt()
      throws Exception {
    sql("alice", "CACHE TABLE sales.orders", Status.OK);
    sql("bob", "CACHE TABLE sales.orders", Status.OK); // a no-op in Spark
    assertRefused("no-shared-cache-ops", () -> sql("bob", "UNCACHE TABLE sales.orders", Status.OK));
    assertRefused(
        "no-shared-cache-ops",
        () -> call("ExecutePlan", catalogUncache("bob", "sales.orders"), Status.OK));
    sql("alice", "UNCACHE TABLE sales.orders", Status.OK);
  }

  @Test
  void cacheOperations_thatSparkRefused_makeNobodyAnOwner() throws Exception {
    sql("carol", "CACHE TABLE sales.orders", REFUSED_BY_SPARK);
    assertRefused(
        "no-shared-cache-ops", () -> sql("carol", "UNCACHE TABLE sales.orders", Status.OK));
    Relation plan = range(3);
    call("AnalyzePlan", persist("carol", plan), REFUSED_BY_SPARK);
    assertRefused(
        "no-shared-cache-ops", () -> call("AnalyzePlan", unpersist("carol", plan), Status.OK));
  }

  @Test
  void unpersist_ofAPlanAnotherSessionPersisted_isRefused_ofTheSessionsOwn_passes()
      throws Exception {
    Relation alices = range(1);
    call("AnalyzePlan", persist("alice", alices), Status.OK);
    assertRefused(
        "no-shared-cache-ops", () -> call("AnalyzePlan", unpersist("bob", alices), Status.OK));
    // bob's own copy of the same DataFrame (another plan id) is cached already: not his either.
    Relation bobs = range(2);
    call("AnalyzePlan", persist("bob", bobs), Status.OK);
    assertRefused(
        "no-shared-cache-ops", () -> call("AnalyzePlan", unpersist("bob", bobs), Status.OK));
  }

  @Test
  void unpersist_ofTheSessionsOwnPlan_passes() throws Exception {
    Relation mine = range(1);
    call("AnalyzePlan", persist("alice", mine), Status.OK);
    call(
        "AnalyzePlan",
        persist(
            "bob", range(9).toBuilder().setRange(Range.newBuilder().setEnd(5).setStep(1)).build()),
        Status.OK);
    // bob's local DataFrame is another plan: it does not stand in the way.
    call("AnalyzePlan", unpersist("alice", mine), Status.OK);
    // Once Spark dropped it, it is no longer the session's to drop.
    assertRefused(
        "no-shared-cache-ops", () -> call("AnalyzePlan", unpersist("alice", mine), Status.OK));
  }

  private void sql(String user, String text, Status answer) throws StatusException {
    call("ExecutePlan", TestRequest.sql(text, user), answer);
  }

  /** One call: the request through every stage, then the backend's answer. */
  private void call(String method, byte[] request, Status answer) throws StatusException {
    close(open(method, request), answer);
  }

  private CallHook open(String method, byte[] request) throws StatusException {
    Call call = Call.of(method);
    CallHook hook = stages.open(call);
    try {
      hook.onAccepted(hook.onRequest(request));
    } catch (StatusException e) {
      hook.onClose(e.getStatus());
      throw e;
    }
    return hook;
  }

  private static void close(CallHook hook, Status answer) {
    hook.onClosing(answer);
    hook.onClose(answer);
  }

  private static void assertRefused(String rule, org.junit.jupiter.api.function.Executable call) {
    assertRefused(rule, call, "not refused");
  }

  private static void assertRefused(
      String rule, org.junit.jupiter.api.function.Executable call, String why) {
    StatusException e = assertThrows(StatusException.class, call, why);
    assertTrue(
        String.valueOf(e.getStatus().getDescription()).contains("'" + rule + "'"),
        e.getStatus().getDescription());
  }

  private static byte[] reattachable(byte[] request) throws Exception {
    return ExecutePlanRequest.parseFrom(request).toBuilder()
        .addRequestOptions(
            ExecutePlanRequest.RequestOption.newBuilder()
                .setReattachOptions(ReattachOptions.newBuilder().setReattachable(true)))
        .build()
        .toByteArray();
  }

  /** spark.catalog.uncacheTable(table) */
  private static byte[] catalogUncache(String user, String table) throws Exception {
    return ExecutePlanRequest.parseFrom(TestRequest.sql("SELECT 1", user)).toBuilder()
        .setPlan(
            io.sparkgate.proto.spark.Plan.newBuilder()
                .setRoot(
                    Relation.newBuilder()
                        .setCatalog(
                            io.sparkgate.proto.spark.Catalog.newBuilder()
                                .setUncacheTable(
                                    io.sparkgate.proto.spark.UncacheTable.newBuilder()
                                        .setTableName(table)))))
        .build()
        .toByteArray();
  }

  /** spark.range(10) as a client sends it, with its plan id. */
  private static Relation range(long planId) {
    return Relation.newBuilder()
        .setCommon(RelationCommon.newBuilder().setPlanId(planId))
        .setRange(Range.newBuilder().setEnd(10).setStep(1))
        .build();
  }

  private static byte[] persist(String user, Relation relation) {
    return analyze(user)
        .setPersist(AnalyzePlanRequest.Persist.newBuilder().setRelation(relation))
        .build()
        .toByteArray();
  }

  private static byte[] unpersist(String user, Relation relation) {
    return analyze(user)
        .setUnpersist(AnalyzePlanRequest.Unpersist.newBuilder().setRelation(relation))
        .build()
        .toByteArray();
  }

  private static AnalyzePlanRequest.Builder analyze(String user) {
    return AnalyzePlanRequest.newBuilder()
        .setSessionId(TestRequest.SESSION)
        .setUserContext(TestRequest.user(user));
  }
}
