package io.sparkgate.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.benmanes.caffeine.cache.Ticker;
import com.sun.net.httpserver.HttpServer;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.AuditEvent;
import io.sparkgate.call.Call;
import io.sparkgate.call.InspectStage;
import io.sparkgate.call.Pipeline;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.config.OpaConfig;
import io.sparkgate.config.Secret;
import io.sparkgate.config.SecretPatterns;
import io.sparkgate.forward.CallHook;
import io.sparkgate.head.HeadStage;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionTracker;
import io.sparkgate.opa.InputDocument;
import io.sparkgate.opa.OpaClient;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The decide stage with OPA behind it, against a small HTTP server standing in for OPA's Data API (OpaIT
 * runs the real one): what OPA is asked, when it is not, and what its answers become.
 */
final class OpaGateTest {
  private static final String POLICY =
      """
      default: allow
      rules:
        - name: no-reflection
          description: d
          effect: deny
          when: {fact: FUNCTION_CALL, attr: {name: reflect}}
          message: "{name}() is not allowed"
      """;

  private static final SessionTracker SESSIONS =
      new SessionTracker(
          () -> BackendProfile.UNKNOWN, Duration.ofMinutes(1), Ticker.systemTicker(), null);

  private HttpServer server;
  private final AtomicReference<String> answer = new AtomicReference<>("{\"result\": true}");
  private final List<String> bodies = new CopyOnWriteArrayList<>();
  private final List<String> authorizations = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() throws Exception {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext(
        "/v1/data/sparkgate/allow",
        ex -> {
          bodies.add(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
          authorizations.add(String.valueOf(ex.getRequestHeaders().getFirst("Authorization")));
          byte[] out = answer.get().getBytes(StandardCharsets.UTF_8);
          ex.sendResponseHeaders(200, out.length);
          ex.getResponseBody().write(out);
          ex.close();
        });
    server.start();
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  private DecideStage stage(String url, boolean allowOnError, int cacheEntries) {
    OpaConfig config =
        new OpaConfig(
            URI.create(url),
            Optional.empty(),
            Optional.of(new Secret("opa-token")),
            "sparkgate/allow",
            Duration.ofMillis(500),
            allowOnError,
            cacheEntries,
            Duration.ofMinutes(1));
    Policy p = Policies.compile(POLICY);
    return new DecideStage(
        new PolicyEngine(() -> p, ProfileSource.fixed(BackendProfile.UNKNOWN)),
        Map.of(),
        false,
        new OpaGate(
            new OpaClient(
                config,
                new InputDocument(false, new SecretPatterns(AuthConfig.DEFAULT_SECRET_PATTERNS))),
            allowOnError,
            "default"));
  }

  private String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  private static CallHook open(DecideStage decide, Call call) throws StatusException {
    return Pipeline.of(
            new HeadStage(AuthConfig.disabled()),
            InspectStage.full(new Inspector(), SESSIONS),
            decide)
        .open(call);
  }

  @Test
  void localRefusal_neverReachesOpa() throws Exception {
    DecideStage decide = stage(url(), false, 0);
    Call call = Call.of("ExecutePlan");
    CallHook hook = open(decide, call);
    StatusException e =
        assertInstanceOf(
            StatusException.class,
            org.junit.jupiter.api.Assertions.assertThrows(
                StatusException.class,
                () -> hook.onRequest(TestRequest.sql("SELECT reflect('a', 'b')", "alice"))));
    assertTrue(e.getStatus().getDescription().contains("no-reflection"));
    assertEquals(List.of(), bodies, "OPA is never asked about what the local policy refused");
    assertNull(call.audit().seal().opa());
  }

  @Test
  void opaAllow_forwards_withTheTokenAndAuditedId() throws Exception {
    answer.set("{\"result\": {\"allow\": true}, \"decision_id\": \"d-1\"}");
    DecideStage decide = stage(url(), false, 0);
    Call call = Call.of("ExecutePlan");
    CallHook hook = open(decide, call);
    assertTrue(hook.mayBlock(new byte[1]), "asking OPA must be off the event loop");
    byte[] request = TestRequest.sql("SELECT 1", "alice");
    assertEquals(request, hook.onRequest(request));
    assertEquals(List.of("Bearer opa-token"), authorizations);
    assertTrue(bodies.get(0).startsWith("{\"input\":{\"backend\":"), bodies.get(0));
    AuditEvent.Opa opa = call.audit().seal().opa();
    assertEquals("d-1", opa.decisionId());
    assertEquals("allow", opa.result());
  }

  @Test
  void opaDeny_isSparksFormWithOpasReasonAndRule_counted() throws Exception {
    answer.set(
        "{\"decision_id\": \"d-2\", \"result\": {\"allow\": false, \"reason\": \"Not on Sundays.\","
            + " \"rule\": \"sundays\"}}");
    DecideStage decide = stage(url(), false, 0);
    Call call = Call.of("ExecutePlan");
    CallHook hook = open(decide, call);
    StatusException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            StatusException.class, () -> hook.onRequest(TestRequest.sql("SELECT 1", "alice")));
    assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode());
    assertEquals(
        "[SPARKGATE_POLICY_DENIED] Sparkgate policy rule 'opa:sundays' refused this request: Not on"
            + " Sundays. SQLSTATE: 42501",
        e.getStatus().getDescription());
    assertEquals("opa:sundays", call.decided().rule());
    assertEquals("deny", call.audit().seal().opa().result());
    assertEquals(
        1L, decide.counts().live().get(new DecisionCounts.Key("deny", "opa:sundays")).sum());
    assertFalse(decide.counts().live().containsKey(new DecisionCounts.Key("allow", "default")));
  }

  @Test
  void unreachable_onErrorDenyRefuses_allowLetsThrough() throws Exception {
    String dead = url();
    server.stop(0);
    Call denied = Call.of("ExecutePlan");
    DecideStage deny = stage(dead, false, 100);
    StatusException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            StatusException.class,
            () -> open(deny, denied).onRequest(TestRequest.sql("SELECT 1", "alice")));
    assertTrue(e.getStatus().getDescription().contains("SPARKGATE_POLICY_UNAVAILABLE"));
    assertEquals("opa-unavailable", denied.decided().rule());
    assertEquals("error", denied.audit().seal().opa().result());
    assertEquals(
        1L, deny.counts().live().get(new DecisionCounts.Key("opa_error", "opa-unavailable")).sum());

    Call allowed = Call.of("ExecutePlan");
    DecideStage allow = stage(dead, true, 100);
    byte[] request = TestRequest.sql("SELECT 1", "alice");
    assertEquals(request, open(allow, allowed).onRequest(request));
    assertEquals("default", allowed.decided().rule());
  }

  @Test
  void cache_asksOncePerDistinctQuestion() throws Exception {
    DecideStage decide = stage(url(), false, 100);
    for (int i = 0; i < 3; i++) {
      open(decide, Call.of("ExecutePlan")).onRequest(TestRequest.sql("SELECT 1", "alice"));
    }
    assertEquals(1, bodies.size());
    Call call = Call.of("ExecutePlan");
    open(decide, call).onRequest(TestRequest.sql("SELECT 1", "alice"));
    assertTrue(call.audit().seal().opa().cached());
    open(decide, Call.of("ExecutePlan")).onRequest(TestRequest.sql("SELECT 2 FROM t", "alice"));
    assertEquals(2, bodies.size());
  }
}
