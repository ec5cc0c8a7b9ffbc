package io.sparkgate.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.benmanes.caffeine.cache.Ticker;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.Call;
import io.sparkgate.call.InspectStage;
import io.sparkgate.call.Pipeline;
import io.sparkgate.call.Principal;
import io.sparkgate.call.Route;
import io.sparkgate.cli.CliPolicyCompiler;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.forward.CallHook;
import io.sparkgate.head.HeadStage;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionTracker;
import io.sparkgate.live.LiveCalls;
import io.sparkgate.policy.DecideStage;
import io.sparkgate.policy.Explanation;
import io.sparkgate.policy.Policy;
import io.sparkgate.policy.PolicyEngine;
import io.sparkgate.policy.ProfileSource;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.revoke.Revocations;
import io.sparkgate.testing.FakeTime;
import io.sparkgate.testing.TestConfigs;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The admin API on a real admin listener, over a live view fed by the real inspect and decide stages (the
 * shipped policy) and fake backend actions: JSON shapes, 404s, redaction, operator records, and the console's
 * page with its Content-Security-Policy.
 */
final class AdminApiTest {
  private static final String SESSION = "0d1c2b3a-0000-4000-8000-000000000001";
  private static final Policy SHARED =
      CliPolicyCompiler.get().compile(Path.of("policies/shared-server.yaml"));
  private static final Policy TEAM_DATA =
      CliPolicyCompiler.get().compile(Path.of("policies/team-data.yaml"));
  private static final ObjectMapper JSON = new ObjectMapper();

  private final FakeTime time = new FakeTime();
  private final LiveCalls live = new LiveCalls(time, Duration.ofMinutes(30));
  private final List<String> actions = new ArrayList<>();
  private final List<Map<String, Object>> audit = new ArrayList<>();
  private final List<String> released = new ArrayList<>();
  private final PolicyEngine engine =
      new PolicyEngine(
          () -> SHARED,
          ProfileSource.fixed(new BackendProfile("4.0.0", List.of(), Map.of(), null)));
  private final Pipeline stages =
      Pipeline.of(
          new HeadStage(AuthConfig.disabled()),
          live,
          call -> {
            call.route(new Route("default", "127.0.0.1:15002"));
            return CallHook.PASS_THROUGH;
          },
          InspectStage.full(
              new Inspector(),
              new SessionTracker(
                  () -> BackendProfile.UNKNOWN,
                  Duration.ofMinutes(1),
                  Ticker.systemTicker(),
                  null)),
          new DecideStage(engine, Map.of(), false));
  private final HttpClient http = HttpClient.newHttpClient();
  private AdminServer server;
  private Revocations revocations;

  @BeforeEach
  void start() throws Exception {
    AdminApi.Actions fake =
        new AdminApi.Actions() {
          @Override
          public List<String> interrupt(String backend, String user, String session, String op) {
            actions.add("interrupt " + backend + " " + user + " " + session + " " + op);
            return List.of(op);
          }

          @Override
          public List<String> interruptAll(String backend, String user, String session) {
            actions.add("interrupt all " + backend + " " + user + " " + session);
            return List.of("op-1", "op-2");
          }

          @Override
          public void release(String backend, String user, String session) {
            actions.add("release " + backend + " " + user + " " + session);
          }
        };
    revocations =
        Revocations.start(
            new AuthConfig.Revocations(Optional.empty(), Optional.empty()), null, time);
    AdminApi api =
        new AdminApi(
            new AdminApi.Views(
                live,
                () -> Map.of("default", new LinkedHashMap<>(Map.of("127.0.0.1:15002", "up"))),
                () ->
                    List.of(
                        new AdminApi.PoolPolicy(
                            "default",
                            SHARED.files(),
                            SHARED.ruleNames(),
                            "deny",
                            2,
                            0,
                            Instant.parse("2026-03-01T11:00:00Z"),
                            null)),
                (pool, sql, method, request, principal, groups) ->
                    pool.equals("default")
                        ? Explanation.of(
                            engine,
                            "ExecutePlan",
                            principal,
                            groups,
                            new Inspector().inspectSql(sql, BackendProfile.UNKNOWN.freshSession()))
                        : null,
                pool ->
                    switch (pool) {
                      case "default" -> TEAM_DATA.dataAccess();
                      case "plain" -> SHARED.dataAccess();
                      default -> null;
                    },
                fake,
                (user, session) -> released.add(user + " " + session),
                audit::add,
                time,
                revocations,
                "fallback"));
    revocations.onRevoked(api::sweep);
    server =
        AdminServer.start(TestConfigs.adminLoopback(0), api.register(new AdminServer.Routes()));
  }

  @AfterEach
  void stop() {
    server.close();
    revocations.close();
  }

  private static Principal alice() {
    return new Principal(
        "alice", List.of(), Optional.empty(), Principal.Method.STATIC_TOKEN, Optional.empty());
  }

  /** An ExecutePlan of {@code sql} by alice, forwarded and still running. */
  private CallHook running(String operationId, String sql) throws StatusException {
    Call call = Call.of("ExecutePlan");
    call.principal(alice());
    CallHook hook = stages.open(call);
    byte[] request = request(operationId, sql);
    byte[] forwarded = hook.onRequest(request);
    hook.onAccepted(forwarded);
    return hook;
  }

  private static byte[] request(String operationId, String sql) {
    return ExecutePlanRequest.newBuilder()
        .setSessionId(SESSION)
        .setUserContext(UserContext.newBuilder().setUserId("alice"))
        .setOperationId(operationId)
        .setPlan(
            Plan.newBuilder().setRoot(Relation.newBuilder().setSql(SQL.newBuilder().setQuery(sql))))
        .build()
        .toByteArray();
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> post(String path, String body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode json(HttpResponse<String> r) throws Exception {
    return JSON.readTree(r.body());
  }

  @Test
  void operations_showTheRunningPlan_withItsLiteralsRedacted() throws Exception {
    running("op-1", "SELECT id FROM range(10) WHERE id = 424242 OR name = 'hunter2'");
    time.advance(Duration.ofSeconds(7));
    HttpResponse<String> r = get("/api/operations");
    assertEquals(200, r.statusCode());
    assertEquals("application/json", r.headers().firstValue("content-type").orElseThrow());
    JsonNode op = json(r).get("operations").get(0);
    assertEquals("op-1", op.get("operation_id").asText());
    assertEquals(SESSION, op.get("session_id").asText());
    assertEquals("alice", op.get("principal").asText());
    assertEquals("default", op.get("pool").asText());
    assertEquals("127.0.0.1:15002", op.get("backend").asText());
    assertEquals(7, op.get("running_seconds").asInt());
    assertFalse(op.get("reattached").asBoolean());
    String sql = op.get("plan_summary").get("sql").get(0).asText();
    assertTrue(sql.startsWith("SELECT id FROM range("), sql);
    for (String page : List.of(r.body(), get("/api/sessions").body())) {
      assertFalse(page.contains("424242"), page);
      assertFalse(page.contains("hunter2"), page);
    }
  }

  @Test
  void sessions_showAgeAndRunningOperations() throws Exception {
    running("op-1", "SELECT 1");
    time.advance(Duration.ofSeconds(3));
    JsonNode s = json(get("/api/sessions")).get("sessions").get(0);
    assertEquals(SESSION, s.get("session_id").asText());
    assertEquals("alice", s.get("principal").asText());
    assertEquals("127.0.0.1:15002", s.get("backend").asText());
    assertEquals(3, s.get("age_seconds").asInt());
    assertEquals(1, s.get("running_operations").asInt());
  }

  @Test
  void interrupt_asksTheSessionsBackendAsItsUser_andAuditsTheOperator() throws Exception {
    running("op-1", "SELECT 1");
    HttpResponse<String> r = post("/api/operations/op-1/interrupt", "{}");
    assertEquals(200, r.statusCode(), r.body());
    assertEquals("interrupted", json(r).get("outcome").asText());
    assertEquals(List.of("interrupt 127.0.0.1:15002 alice " + SESSION + " op-1"), actions);
    Map<String, Object> record = audit.get(0);
    assertEquals("loopback", record.get("operator"));
    assertEquals("interrupt", record.get("action"));
    assertEquals("operation:op-1", record.get("target"));
    assertEquals("interrupted", record.get("outcome"));
    assertEquals("alice", record.get("principal"));
  }

  @Test
  void release_forgetsTheSession_andAuditsTheOperator() throws Exception {
    running("op-1", "SELECT 1").onClose(Status.OK);
    HttpResponse<String> r = post("/api/sessions/" + SESSION + "/release", "{}");
    assertEquals(200, r.statusCode(), r.body());
    assertEquals(List.of("release 127.0.0.1:15002 alice " + SESSION), actions);
    assertEquals(List.of("alice " + SESSION), released);
    assertEquals("release", audit.get(0).get("action"));
    assertEquals(0, json(get("/api/sessions")).get("sessions").size());
  }

  private HttpResponse<String> delete(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
            .DELETE()
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void revokePrincipal_stopsItsSessionsHere_isListed_audited_andRestored() throws Exception {
    running("op-1", "SELECT 1");
    HttpResponse<String> r =
        post(
            "/api/principals/alice/revoke",
            "{\"reason\": \"laptop stolen\", \"until\": \"2031-01-01T00:00:00+01:00\"}");
    assertEquals(200, r.statusCode(), r.body());
    JsonNode revoked = json(r).get("revoked");
    assertEquals("alice", revoked.get("name").asText());
    assertEquals("2030-12-31T23:00:00Z", revoked.get("until").asText());
    assertEquals("memory", json(r).get("kept_in").asText());
    // Its session on this replica: every operation interrupted, twice, then released, as its own
    // user.
    io.sparkgate.testing.Await.until("the session released", () -> released.size() == 1);
    assertEquals(
        List.of(
            "interrupt all 127.0.0.1:15002 alice " + SESSION,
            "interrupt all 127.0.0.1:15002 alice " + SESSION,
            "release 127.0.0.1:15002 alice " + SESSION),
        actions);
    assertEquals(List.of("alice " + SESSION), released);
    assertEquals(
        List.of("revoke", "revoke-release"), audit.stream().map(a -> a.get("action")).toList());
    assertEquals("principal:alice", audit.get(0).get("target"));
    assertEquals("laptop stolen", audit.get(0).get("reason"));
    assertEquals("loopback", audit.get(0).get("operator"));
    assertEquals("loopback", audit.get(1).get("operator"));
    assertEquals("interrupted 2 operations, released", audit.get(1).get("outcome"));
    assertEquals(2, audit.size());
    assertTrue(revocations.principal("alice").isPresent());
    assertTrue(revocations.principal("Alice").isEmpty(), "names match exactly");

    JsonNode list = json(get("/api/revocations"));
    assertEquals("fallback", list.get("anonymous").asText());
    assertEquals("alice", list.get("revoked").get(0).get("name").asText());

    HttpResponse<String> restored = delete("/api/principals/alice/revoke");
    assertEquals(200, restored.statusCode(), restored.body());
    assertEquals("restore", audit.get(2).get("action"));
    assertTrue(revocations.principal("alice").isEmpty());
    assertEquals(0, json(get("/api/revocations")).get("revoked").size());
    assertEquals(404, delete("/api/principals/alice/revoke").statusCode());
  }

  @Test
  void revokeToken_andNamesWithSlashes_percentEncoded() throws Exception {
    assertEquals(
        200,
        post("/api/tokens/jti-123/revoke", "{\"reason\": \"leaked in a ticket\"}").statusCode());
    assertTrue(revocations.token("jti-123").isPresent());
    assertTrue(revocations.principal("jti-123").isEmpty());
    assertEquals(
        200,
        post("/api/principals/spiffe:%2F%2Fexample.org%2Fbob/revoke", "{\"reason\": \"x\"}")
            .statusCode());
    assertTrue(revocations.principal("spiffe://example.org/bob").isPresent());
    assertEquals(List.of(), actions, "no session of theirs here");
  }

  @Test
  void revoke_refusesBadInput_withoutActingOrAuditing() throws Exception {
    running("op-1", "SELECT 1");
    assertEquals(400, post("/api/principals/alice/revoke", "{}").statusCode());
    assertEquals(400, post("/api/principals/alice/revoke", "not json").statusCode());
    assertEquals(
        400,
        post("/api/principals/alice/revoke", "{\"reason\": \"x\", \"until\": \"tomorrow\"}")
            .statusCode());
    HttpResponse<String> past =
        post(
            "/api/principals/alice/revoke",
            "{\"reason\": \"x\", \"until\": \"2001-01-01T00:00:00Z\"}");
    assertEquals(400, past.statusCode());
    assertTrue(json(past).get("error").asText().contains("in the past"), past.body());
    assertEquals(
        400,
        post("/api/principals/alice/revoke", "{\"reason\": \"" + "x".repeat(501) + "\"}")
            .statusCode());
    assertEquals(405, get("/api/principals/alice/revoke").statusCode());
    assertEquals(404, post("/api/principals/alice", "{\"reason\": \"x\"}").statusCode());
    assertEquals(List.of(), actions);
    assertEquals(List.of(), audit);
    assertTrue(revocations.principal("alice").isEmpty());
  }

  @Test
  void unknownIds_are404Json_andNothingIsDoneOrAudited() throws Exception {
    for (String path :
        List.of(
            "/api/operations/nope/interrupt", "/api/sessions/nope/release", "/api/sessions/x/y")) {
      HttpResponse<String> r = post(path, "{}");
      assertEquals(404, r.statusCode(), path);
      assertTrue(json(r).has("error"), r.body());
    }
    assertEquals(List.of(), actions);
    assertEquals(List.of(), audit);
  }

  @Test
  void actionsNeedPost_andJson() throws Exception {
    running("op-1", "SELECT 1");
    HttpResponse<String> wrongMethod = get("/api/operations/op-1/interrupt");
    assertEquals(405, wrongMethod.statusCode());
    assertEquals("POST", wrongMethod.headers().firstValue("allow").orElseThrow());
    HttpResponse<String> plain =
        http.send(
            HttpRequest.newBuilder(
                    URI.create(
                        "http://127.0.0.1:" + server.port() + "/api/operations/op-1/interrupt"))
                .header("Content-Type", "text/plain")
                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(415, plain.statusCode());
    assertEquals(List.of(), actions);
  }

  @Test
  void refusals_nameTheRule_withoutTheRequestsText() throws Exception {
    assertThrows(
            StatusException.class,
            () -> running("op-2", "SELECT reflect('java.lang.System', 'getenv', 'SECRET_X')"))
        .getStatus();
    // The forwarding layer closes a refused call with its status.
    Call call = Call.of("ExecutePlan");
    call.principal(alice());
    CallHook hook = stages.open(call);
    try {
      hook.onRequest(
          request("op-3", "SELECT java_method('java.lang.System', 'getenv', 'SECRET_Y')"));
    } catch (StatusException e) {
      hook.onClose(e.getStatus());
    }
    HttpResponse<String> r = get("/api/refusals");
    JsonNode refusal = json(r).get("refusals").get(0);
    assertEquals("policy", refusal.get("kind").asText());
    assertEquals("no-reflection", refusal.get("reason").asText());
    assertEquals("alice", refusal.get("principal").asText());
    assertEquals("ExecutePlan", refusal.get("rpc").asText());
    assertEquals("PERMISSION_DENIED", refusal.get("code").asText());
    assertFalse(r.body().contains("SECRET_Y"), r.body());
  }

  @Test
  void backendsAndPolicy() throws Exception {
    JsonNode pool = json(get("/api/backends")).get("pools").get(0);
    assertEquals("default", pool.get("pool").asText());
    assertEquals("up", pool.get("backends").get(0).get("state").asText());
    JsonNode policy = json(get("/api/policy")).get("pools").get(0);
    assertTrue(policy.get("file").asText().endsWith("shared-server.yaml"), policy.toString());
    assertTrue(policy.get("rules").toString().contains("no-reflection"));
    assertEquals("deny", policy.get("default_effect").asText());
    assertEquals(2, policy.get("reloads").asInt());
    assertEquals("2026-03-01T11:00:00Z", policy.get("last_reload").asText());
    assertTrue(policy.get("last_error").isNull());
  }

  @Test
  void playground_explainsAsTheCliDoes() throws Exception {
    HttpResponse<String> r =
        post("/api/playground", "{\"pool\": \"default\", \"sql\": \"SELECT reflect('a','b')\"}");
    assertEquals(200, r.statusCode(), r.body());
    JsonNode e = json(r);
    assertEquals("deny", e.get("decision").asText());
    assertEquals("no-reflection", e.get("rule").asText());
    assertTrue(e.get("facts").toString().contains("FUNCTION_CALL"), e.toString());
    String last = e.get("lines").get(e.get("lines").size() - 1).asText();
    assertTrue(last.startsWith("decision: deny by rule 'no-reflection'"), last);

    assertEquals(
        404, post("/api/playground", "{\"pool\": \"nope\", \"sql\": \"SELECT 1\"}").statusCode());
    assertEquals(400, post("/api/playground", "{\"pool\": \"default\"}").statusCode());
    assertEquals(400, post("/api/playground", "not json").statusCode());
  }

  @Test
  void grantsWho_listsTheCoveringGrants_ofTheDefaultPool() throws Exception {
    HttpResponse<String> r =
        get("/api/grants/who?table=spark_catalog.scratch_alice.t&path=s3a://finance-data/x");
    assertEquals(200, r.statusCode(), r.body());
    JsonNode who = json(r);
    assertEquals("default", who.get("pool").asText());
    assertEquals("deny", who.get("default").asText());
    JsonNode g = who.get("grants").get(0);
    assertEquals("own-scratch", g.get("grant").asText());
    assertEquals("principals [*]", g.get("to").asText());
    assertEquals("spark_catalog.scratch_{principal}.*", g.get("pattern").asText());
    assertEquals("alice", g.get("principal").asText());
    assertEquals("finance-bucket", who.get("path_grants").get(0).get("grant").asText());
    assertTrue(who.get("path_grants").get(0).get("principal").isNull());
  }

  @Test
  void grantsWhat_listsTheGrantsHeld() throws Exception {
    HttpResponse<String> r =
        get("/api/grants/what?principal=bob&groups=analysts,%20x&pool=default");
    assertEquals(200, r.statusCode(), r.body());
    JsonNode what = json(r);
    assertEquals("[\"analysts\",\"x\"]", what.get("groups").toString());
    assertTrue(what.get("tenant").isNull());
    JsonNode grants = what.get("grants");
    assertEquals(2, grants.size(), grants.toString());
    assertEquals("analysts-read-shared", grants.get(0).get("grant").asText());
    assertEquals("[\"select\"]", grants.get(0).get("privileges").toString());
    assertEquals("spark_catalog.scratch_bob.*", grants.get(1).get("tables").get(0).asText());
  }

  @Test
  void grants_errorsAreJson() throws Exception {
    HttpResponse<String> bad = get("/api/grants/who?table=finance.payroll");
    assertEquals(400, bad.statusCode());
    assertEquals(
        "'finance.payroll' is not catalog.namespace.name (e.g. spark_catalog.finance.payroll)",
        json(bad).get("error").asText());
    assertEquals(400, get("/api/grants/who").statusCode());
    assertEquals(400, get("/api/grants/what?groups=a").statusCode());
    HttpResponse<String> none = get("/api/grants/what?principal=a&pool=plain");
    assertEquals(404, none.statusCode());
    assertTrue(json(none).get("error").asText().contains("no data_access section"), none.body());
    assertEquals(404, get("/api/grants/who?table=a.b.c&pool=nope").statusCode());
    assertEquals(405, post("/api/grants/who?table=a.b.c", "{}").statusCode());
  }

  @Test
  void console_isServedWithAStrictContentSecurityPolicy() throws Exception {
    HttpResponse<String> page = get("/");
    assertEquals(200, page.statusCode());
    assertTrue(page.headers().firstValue("content-type").orElseThrow().startsWith("text/html"));
    String csp = page.headers().firstValue("content-security-policy").orElseThrow();
    assertTrue(csp.startsWith("default-src 'self'"), csp);
    assertFalse(page.body().contains("<script>"), "no inline script: the policy would block it");
    assertEquals(200, get("/console/console.js").statusCode());
    assertEquals(200, get("/console/console.css").statusCode());
    assertEquals(404, get("/console/nope.js").statusCode());
  }
}
