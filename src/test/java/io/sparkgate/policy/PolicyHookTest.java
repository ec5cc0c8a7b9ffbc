package io.sparkgate.policy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.benmanes.caffeine.cache.Ticker;
import com.google.rpc.ErrorInfo;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.protobuf.StatusProto;
import io.sparkgate.audit.TestEvidence;
import io.sparkgate.forward.CallHook;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionTracker;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

final class PolicyHookTest {
  private static final String POLICY = """
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

  private static CallHook call(Supplier<Policy> policy, Map<String, RequestRewriter> rewriters) throws Exception {
    ProfileSource profiles = ProfileSource.fixed(BackendProfile.UNKNOWN);
    SessionTracker sessions = new SessionTracker(() -> BackendProfile.UNKNOWN, Duration.ofMinutes(1), Ticker.systemTicker());
    PolicyHook hook = new PolicyHook(new Inspector(), sessions, new PolicyEngine(policy, profiles), rewriters, false);
    return hook.newCall(method("ExecutePlan"), new Metadata());
  }

  private static MethodDescriptor<byte[], byte[]> method(String name) {
    MethodDescriptor.Marshaller<byte[]> m = new MethodDescriptor.Marshaller<>() {
      @Override
      public InputStream stream(byte[] value) {
        return new ByteArrayInputStream(value);
      }

      @Override
      public byte[] parse(InputStream stream) {
        throw new UnsupportedOperationException();
      }
    };
    return MethodDescriptor.<byte[], byte[]>newBuilder().setType(MethodDescriptor.MethodType.SERVER_STREAMING)
        .setFullMethodName("spark.connect.SparkConnectService/" + name).setRequestMarshaller(m).setResponseMarshaller(m).build();
  }

  @Test
  void shadowRuleLetsTheRequestThroughAndRecordsTheWouldBeDecision() {
    Policy p = Policies.compile(POLICY);
    byte[] request = TestRequest.sql("SELECT 1 AS one", "alice");
    TestEvidence.Recorded r = TestEvidence.record(() -> call(() -> p, Map.of()).onRequest(request));
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
    TestEvidence.Recorded one = TestEvidence.record(() -> call(() -> p, Map.of()).onRequest(
        TestRequest.sql("SELECT 1 AS one FROM a", "alice")));
    assertEquals(List.of("SELECT ? AS one FROM a"), summaryOf(one).get("sql"));
    assertEquals(List.of("spark_catalog.default.a"), summaryOf(one).get("tables_read"));

    TestEvidence.Recorded three = TestEvidence.record(() -> {
      CallHook hook = call(() -> p, Map.of());
      hook.onRequest(TestRequest.sql("SELECT 1 AS one FROM a", "alice"));
      hook.onRequest(TestRequest.sql("SELECT 2 AS two FROM b", "alice"));
      return hook.onRequest(TestRequest.sql("SELECT 3 AS three FROM c", "alice"));
    });
    assertEquals(List.of("SELECT ? AS one FROM a", "SELECT ? AS two FROM b", "SELECT ? AS three FROM c"),
        summaryOf(three).get("sql"));
    assertEquals(List.of("spark_catalog.default.a", "spark_catalog.default.b", "spark_catalog.default.c"),
        summaryOf(three).get("tables_read"));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> summaryOf(TestEvidence.Recorded r) {
    assertNull(r.thrown());
    return (Map<String, Object>) r.fields().get("plan_summary");
  }

  @Test
  void refusalCarriesSparkStyleErrorInfo() throws Exception {
    Policy p = Policies.compile(POLICY);
    byte[] request = TestRequest.sql("SELECT reflect('java.lang.System', 'getenv')", "alice");
    TestEvidence.Recorded r = TestEvidence.record(() -> call(() -> p, Map.of()).onRequest(request));
    StatusException e = assertInstanceOf(StatusException.class, r.thrown());
    assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode());
    com.google.rpc.Status details = StatusProto.fromThrowable(e);
    assertEquals("[SPARKGATE_POLICY_DENIED] Sparkgate policy rule 'no-reflection' refused this request: "
        + "reflect() is not allowed SQLSTATE: 42501", details.getMessage());
    assertEquals(e.getStatus().getDescription(), details.getMessage());
    ErrorInfo info = details.getDetailsList().get(0).unpack(ErrorInfo.class);
    assertEquals("org.apache.spark.sql.AnalysisException", info.getReason());
    assertEquals("org.apache.spark", info.getDomain());
    assertFalse(info.getMetadataMap().containsKey("errorClass"), "the 4.0 JVM client rejects unknown error classes");
    assertEquals("42501", info.getMetadataMap().get("sqlState"));
    assertTrue(info.getMetadataMap().get("classes").startsWith("[\"org.apache.spark.sql.AnalysisException\""));
    assertTrue(info.getMetadataMap().get("messageParameters").contains("\"rule\":\"no-reflection\""));
    assertFalse(info.getMetadataMap().containsKey("errorId"), "no errorId: the server has no details to fetch");
    assertEquals("deny", r.fields().get("decision"));
    assertEquals("no-reflection", r.fields().get("rule"));
  }

  @Test
  void rewriteReplacesTheRequestAndIsAudited() {
    Policy p = Policies.compile(POLICY);
    byte[] rewritten = TestRequest.sql("SELECT 2", "alice");
    RequestRewriter rw = (req, facts, profile, session) -> new RequestRewriter.Result(rewritten, "rewrote rewrite_me");
    TestEvidence.Recorded r = TestEvidence.record(() -> {
      assertArrayEquals(rewritten, call(() -> p, Map.of("test_rewriter", rw)).onRequest(TestRequest.sql("SELECT * FROM rewrite_me", "alice")));
      return null;
    });
    assertNull(r.thrown());
    assertEquals("rewrite", r.fields().get("decision"));
    assertEquals(List.of(Map.of("rule", "rewrite-me", "rewriter", "test_rewriter", "change", "rewrote rewrite_me")),
        r.fields().get("rewrites"));
  }

  /** What the metrics endpoint shows: each message's outcome under its deciding rule, and shadow matches. */
  @Test
  void decisionsCountedByOutcomeAndRule() throws Exception {
    Policy p = Policies.compile(POLICY);
    byte[] rewritten = TestRequest.sql("SELECT 2", "alice");
    boolean[] canRewrite = {true};
    RequestRewriter rw = (req, facts, profile, session) -> {
      if (!canRewrite[0]) throw new StatusException(Status.FAILED_PRECONDITION.withDescription("cannot"));
      return new RequestRewriter.Result(rewritten, "rewrote rewrite_me");
    };
    PolicyHook hook = new PolicyHook(new Inspector(),
        new SessionTracker(() -> BackendProfile.UNKNOWN, Duration.ofMinutes(1), Ticker.systemTicker()),
        new PolicyEngine(() -> p, ProfileSource.fixed(BackendProfile.UNKNOWN)), Map.of("test_rewriter", rw), false);
    TestEvidence.record(() -> hook.newCall(method("ExecutePlan"), new Metadata()).onRequest(
        TestRequest.sql("SELECT 1", "alice")));
    TestEvidence.record(() -> hook.newCall(method("ExecutePlan"), new Metadata()).onRequest(
        TestRequest.sql("SELECT reflect('a', 'b')", "alice")));
    TestEvidence.record(() -> hook.newCall(method("ExecutePlan"), new Metadata()).onRequest(
        TestRequest.sql("SELECT * FROM rewrite_me", "alice")));
    canRewrite[0] = false;
    TestEvidence.record(() -> hook.newCall(method("ExecutePlan"), new Metadata()).onRequest(
        TestRequest.sql("SELECT * FROM rewrite_me", "alice")));

    Map<String, Long> counts = new java.util.TreeMap<>();
    hook.counts().live().forEach((k, n) -> counts.put(k.outcome() + ":" + k.rule(), n.sum()));
    assertEquals(1L, counts.get("allow:default"));
    assertEquals(1L, counts.get("deny:no-reflection"));
    assertEquals(1L, counts.get("rewrite:rewrite-me"), "the rewrite that succeeded");
    assertEquals(1L, counts.get("deny:rewrite-me"), "the one that could not be rewritten counts as its refusal");
    assertEquals(3L, counts.get("shadow:would-block-sql"), "the SQL the shadow rule saw (not the refused reflect)");
    assertEquals(5, counts.size(), counts.toString());
  }

  @Test
  void failClosed_exceptionsAnywhereAreRefusals() {
    byte[] request = TestRequest.sql("SELECT 1", "alice");
    // The policy cannot even be obtained.
    TestEvidence.Recorded r = TestEvidence.record(() -> call(() -> {
      throw new IllegalStateException("boom");
    }, Map.of()).onRequest(request));
    assertEquals(Status.Code.PERMISSION_DENIED, assertInstanceOf(StatusException.class, r.thrown()).getStatus().getCode());
    assertEquals("deny", r.fields().get("decision"));
    // A rewriter that fails.
    Policy p = Policies.compile(POLICY);
    RequestRewriter broken = (req, facts, profile, session) -> {
      throw new IllegalArgumentException("bug");
    };
    r = TestEvidence.record(() -> call(() -> p, Map.of("test_rewriter", broken)).onRequest(TestRequest.sql("SELECT * FROM rewrite_me", "alice")));
    assertInstanceOf(StatusException.class, r.thrown());
    assertEquals("deny", r.fields().get("decision"));
    // A rewriter that is named by the policy but not registered.
    r = TestEvidence.record(() -> call(() -> p, Map.of()).onRequest(TestRequest.sql("SELECT * FROM rewrite_me", "alice")));
    assertInstanceOf(StatusException.class, r.thrown());
    // Garbage bytes: the inspector reports them as unclassified, and a policy refusing those refuses.
    Policy strict = Policies.compile("default: allow\nrules:\n  - {name: u, description: d, effect: deny, when: {fact: UNCLASSIFIED}}\n");
    r = TestEvidence.record(() -> call(() -> strict, Map.of()).onRequest(new byte[] {(byte) 0xff, 0x01, 0x02}));
    assertInstanceOf(StatusException.class, r.thrown());
  }
}
