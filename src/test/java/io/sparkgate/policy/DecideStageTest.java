package io.sparkgate.policy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.benmanes.caffeine.cache.Ticker;
import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.protobuf.StatusProto;
import io.sparkgate.call.AuditEvent;
import io.sparkgate.call.Call;
import io.sparkgate.call.InspectStage;
import io.sparkgate.call.Pipeline;
import io.sparkgate.call.RequestRewriter;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.forward.CallHook;
import io.sparkgate.head.HeadStage;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionTracker;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

final class DecideStageTest {
  private static final String POLICY =
      """
      default: allow
      rules:
        - name: no-reflection
          description: d
          effect: deny
          when: {fact: FUNCTION_CALL, attr: {name: reflect}}
          message: "{name}() is not allowed"
        - name: would-block-sql
          description: d
          effect: deny
          mode: shadow
          when: {fact: SQL}
        - name: rewrite-me
          description: d
          effect: rewrite
          rewriter: test_rewriter
          when: {fact: TABLE_READ, attr: {name: rewrite_me}}
      """;

  private static final SessionTracker SESSIONS =
      new SessionTracker(
          () -> BackendProfile.UNKNOWN, Duration.ofMinutes(1), Ticker.systemTicker(), null);

  private static DecideStage stage(
      Supplier<Policy> policy, Map<String, RequestRewriter> rewriters) {
    return new DecideStage(
        new PolicyEngine(policy, ProfileSource.fixed(BackendProfile.UNKNOWN)), rewriters, false);
  }

  /** One ExecutePlan call through the inspect stage and this decide stage. */
  private static CallHook call(DecideStage decide, Call call) throws StatusException {
    return Pipeline.of(
            new HeadStage(AuthConfig.disabled()),
            InspectStage.full(new Inspector(), SESSIONS),
            decide)
        .open(call);
  }

  private static CallHook call(
      Supplier<Policy> policy, Map<String, RequestRewriter> rewriters, Call call)
      throws StatusException {
    return call(stage(policy, rewriters), call);
  }

  /** What a call recorded for its audit record, under the record's names, and what its stages threw. */
  private record Recorded(Map<String, Object> fields, Exception thrown) {}

  @FunctionalInterface
  private interface Body {
    void run(Call call) throws Exception;
  }

  private static Recorded record(Body body) {
    Call call = Call.of("ExecutePlan");
    Exception thrown = null;
    try {
      body.run(call);
    } catch (Exception e) {
      thrown = e;
    }
    Map<String, Object> fields = new HashMap<>();
    if (call.decided() != null) {
      fields.put("decision", call.decided().effect());
      fields.put("rule", call.decided().rule());
    }
    AuditEvent.Sealed event = call.audit().seal();
    if (!event.shadowDecisions().isEmpty()) fields.put("shadow_decisions", event.shadowDecisions());
    if (event.planSummary() != null) fields.put("plan_summary", event.planSummary().get());
    if (!event.rewrites().isEmpty()) {
      fields.put(
          "rewrites",
          event.rewrites().stream()
              .map(r -> Map.of("rule", r.rule(), "rewriter", r.rewriter(), "change", r.change()))
              .toList());
    }
    return new Recorded(fields, thrown);
  }

  @Test
  void shadowRuleLetsTheRequestThroughAndRecordsTheWouldBeDecision() {
    Policy p = Policies.compile(POLICY);
    byte[] request = TestRequest.sql("SELECT 1 AS one", "alice");
    Recorded r = record(c -> call(() -> p, Map.of(), c).onRequest(request));
    assertNull(r.thrown());
    assertEquals("allow", r.fields().get("decision"));
    assertEquals("default", r.fields().get("rule"));
    assertEquals(List.of("deny:would-block-sql"), r.fields().get("shadow_decisions"));
    @SuppressWarnings("unchecked")
    Map<String, Object> summary = (Map<String, Object>) r.fields().get("plan_summary");
    assertEquals(List.of("SELECT ? AS one"), summary.get("sql"), "literals are redacted");
  }

  /** The first message's summary is built later by the audit writer; later messages add to it in order. */
  @Test
  void summaryCoversEveryMessageOfTheCallInOrder() {
    Policy p = Policies.compile(POLICY);
    Recorded one =
        record(
            c ->
                call(() -> p, Map.of(), c)
                    .onRequest(TestRequest.sql("SELECT 1 AS one FROM a", "alice")));
    assertEquals(List.of("SELECT ? AS one FROM a"), summaryOf(one).get("sql"));
    assertEquals(List.of("spark_catalog.default.a"), summaryOf(one).get("tables_read"));

    Recorded three =
        record(
            c -> {
              CallHook hook = call(() -> p, Map.of(), c);
              hook.onRequest(TestRequest.sql("SELECT 1 AS one FROM a", "alice"));
              hook.onRequest(TestRequest.sql("SELECT 2 AS two FROM b", "alice"));
              hook.onRequest(TestRequest.sql("SELECT 3 AS three FROM c", "alice"));
            });
    assertEquals(
        List.of("SELECT ? AS one FROM a", "SELECT ? AS two FROM b", "SELECT ? AS three FROM c"),
        summaryOf(three).get("sql"));
    assertEquals(
        List.of("spark_catalog.default.a", "spark_catalog.default.b", "spark_catalog.default.c"),
        summaryOf(three).get("tables_read"));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> summaryOf(Recorded r) {
    assertNull(r.thrown());
    return (Map<String, Object>) r.fields().get("plan_summary");
  }

  @Test
  void refusalCarriesSparkStyleErrorInfo() throws Exception {
    Policy p = Policies.compile(POLICY);
    byte[] request = TestRequest.sql("SELECT reflect('java.lang.System', 'getenv')", "alice");
    Recorded r = record(c -> call(() -> p, Map.of(), c).onRequest(request));
    StatusException e = assertInstanceOf(StatusException.class, r.thrown());
    assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode());
    com.google.rpc.Status details = StatusProto.fromThrowable(e);
    assertEquals(
        "[SPARKGATE_POLICY_DENIED] Sparkgate policy rule 'no-reflection' refused this request: "
            + "reflect() is not allowed SQLSTATE: 42501",
        details.getMessage());
    assertEquals(e.getStatus().getDescription(), details.getMessage());
    ErrorInfo info = details.getDetailsList().get(0).unpack(ErrorInfo.class);
    assertEquals("org.apache.spark.sql.AnalysisException", info.getReason());
    assertEquals("org.apache.spark", info.getDomain());
    assertFalse(
        info.getMetadataMap().containsKey("errorClass"),
        "the 4.0 JVM client rejects unknown error classes");
    assertEquals("42501", info.getMetadataMap().get("sqlState"));
    assertTrue(
        info.getMetadataMap()
            .get("classes")
            .startsWith("[\"org.apache.spark.sql.AnalysisException\""));
    assertTrue(
        info.getMetadataMap().get("messageParameters").contains("\"rule\":\"no-reflection\""));
    assertFalse(
        info.getMetadataMap().containsKey("errorId"),
        "no errorId: the server has no details to fetch");
    assertEquals("deny", r.fields().get("decision"));
    assertEquals("no-reflection", r.fields().get("rule"));
  }

  @Test
  void rewriteReplacesTheRequestAndIsAudited() {
    Policy p = Policies.compile(POLICY);
    byte[] rewritten = TestRequest.sql("SELECT 2", "alice");
    RequestRewriter rw =
        (method, req, facts, profile, session) ->
            new RequestRewriter.Result(rewritten, "rewrote rewrite_me");
    Recorded r =
        record(
            c ->
                assertArrayEquals(
                    rewritten,
                    call(() -> p, Map.of("test_rewriter", rw), c)
                        .onRequest(TestRequest.sql("SELECT * FROM rewrite_me", "alice"))));
    assertNull(r.thrown());
    assertEquals("rewrite", r.fields().get("decision"));
    assertEquals(
        List.of(
            Map.of(
                "rule", "rewrite-me", "rewriter", "test_rewriter", "change", "rewrote rewrite_me")),
        r.fields().get("rewrites"));
  }

  /** What the metrics endpoint shows: each message's outcome under its deciding rule, and shadow matches. */
  @Test
  void decisionsCountedByOutcomeAndRule() throws Exception {
    Policy p = Policies.compile(POLICY);
    byte[] rewritten = TestRequest.sql("SELECT 2", "alice");
    boolean[] canRewrite = {true};
    RequestRewriter rw =
        (method, req, facts, profile, session) -> {
          if (!canRewrite[0])
            throw new StatusException(Status.FAILED_PRECONDITION.withDescription("cannot"));
          return new RequestRewriter.Result(rewritten, "rewrote rewrite_me");
        };
    DecideStage hook = stage(() -> p, Map.of("test_rewriter", rw));
    record(c -> call(hook, c).onRequest(TestRequest.sql("SELECT 1", "alice")));
    record(c -> call(hook, c).onRequest(TestRequest.sql("SELECT reflect('a', 'b')", "alice")));
    record(c -> call(hook, c).onRequest(TestRequest.sql("SELECT * FROM rewrite_me", "alice")));
    canRewrite[0] = false;
    record(c -> call(hook, c).onRequest(TestRequest.sql("SELECT * FROM rewrite_me", "alice")));

    Map<String, Long> counts = new java.util.TreeMap<>();
    hook.counts().live().forEach((k, n) -> counts.put(k.outcome() + ":" + k.rule(), n.sum()));
    assertEquals(1L, counts.get("allow:default"));
    assertEquals(1L, counts.get("deny:no-reflection"));
    assertEquals(1L, counts.get("rewrite:rewrite-me"), "the rewrite that succeeded");
    assertEquals(
        1L,
        counts.get("deny:rewrite-me"),
        "the one that could not be rewritten counts as its refusal");
    assertEquals(
        3L,
        counts.get("shadow:would-block-sql"),
        "the SQL the shadow rule saw (not the refused reflect)");
    assertEquals(5, counts.size(), counts.toString());
  }

  @Test
  void failClosed_exceptionsAnywhereAreRefusals() {
    byte[] request = TestRequest.sql("SELECT 1", "alice");
    // The policy cannot even be obtained.
    Recorded r =
        record(
            c ->
                call(
                        () -> {
                          throw new IllegalStateException("boom");
                        },
                        Map.of(),
                        c)
                    .onRequest(request));
    assertEquals(
        Status.Code.PERMISSION_DENIED,
        assertInstanceOf(StatusException.class, r.thrown()).getStatus().getCode());
    assertEquals("deny", r.fields().get("decision"));
    // A rewriter that fails.
    Policy p = Policies.compile(POLICY);
    RequestRewriter broken =
        (method, req, facts, profile, session) -> {
          throw new IllegalArgumentException("bug");
        };
    r =
        record(
            c ->
                call(() -> p, Map.of("test_rewriter", broken), c)
                    .onRequest(TestRequest.sql("SELECT * FROM rewrite_me", "alice")));
    assertInstanceOf(StatusException.class, r.thrown());
    assertEquals("deny", r.fields().get("decision"));
    // A rewriter that is named by the policy but not registered.
    r =
        record(
            c ->
                call(() -> p, Map.of(), c)
                    .onRequest(TestRequest.sql("SELECT * FROM rewrite_me", "alice")));
    assertInstanceOf(StatusException.class, r.thrown());
    // Garbage bytes: the inspector reports them as unclassified, and a policy refusing those
    // refuses.
    Policy strict =
        Policies.compile(
            "default: allow\nrules:\n  - {name: u, description: d, effect: deny, when: {fact: UNCLASSIFIED}}\n");
    r =
        record(
            c -> call(() -> strict, Map.of(), c).onRequest(new byte[] {(byte) 0xff, 0x01, 0x02}));
    assertInstanceOf(StatusException.class, r.thrown());
  }
}
