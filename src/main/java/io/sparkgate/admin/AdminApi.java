package io.sparkgate.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.Channel;
import io.grpc.StatusRuntimeException;
import io.sparkgate.grants.DataAccess;
import io.sparkgate.live.LiveCalls;
import io.sparkgate.policy.Explanation;
import io.sparkgate.revoke.Revocation;
import io.sparkgate.revoke.Revocations;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin API and the console on the admin listener. The JSON endpoints (for authenticated operators) read
 * narrow views of the running proxy: the live calls, backend health, the policies in force, the policy
 * playground and access review of the data grants; two act, each writing an audit record with the operator: interrupting an operation and releasing
 * a session, which ask the backend holding the session as the session's own user. The console's page and
 * assets are static and open (they hold no data; the page asks the API, with the operator's credentials).
 *
 * <p>Nothing here shows a token or secret, and SQL is shown only as the audit record's plan summary shows it
 * (literals redacted unless {@code audit.include_literals}); the playground echoes only what the operator sent.
 */
public final class AdminApi {
  private static final Logger log = LoggerFactory.getLogger(AdminApi.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The page's policy: its own scripts, styles and API only; no inline code, framing, forms or plugins. */
  static final String CONTENT_SECURITY_POLICY =
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self';"
          + " object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

  /** The console's files under src/main/resources/console, by the path they are served at. */
  private static final Map<String, String> ASSETS =
      Map.of(
          "/", "index.html",
          "/console/console.js", "console.js",
          "/console/console.css", "console.css");

  /** The policy one pool has in force. */
  public record PoolPolicy(
      String pool,
      List<String> files,
      List<String> rules,
      String defaultEffect,
      long reloads,
      long rejected,
      Instant loadedAt,
      String lastError) {}

  /** What the playground decides with: the pool's policy in force; null for a pool without one. */
  @FunctionalInterface
  public interface Playground {
    /**
     * @param request null for {@code sql}; else a {@code method} request's wire bytes
     * @throws IllegalArgumentException for input that cannot be read
     */
    Explanation explain(
        String pool,
        String sql,
        String method,
        byte[] request,
        String principal,
        List<String> groups);
  }

  /** Acts on a backend for an operator. */
  public interface Actions {
    /** The operation ids the backend interrupted. */
    List<String> interrupt(String backend, String userId, String sessionId, String operationId);

    /** Interrupts every operation of the session: the ids the backend interrupted. */
    List<String> interruptAll(String backend, String userId, String sessionId);

    void release(String backend, String userId, String sessionId);

    /** Over Spark Connect: {@code channels} gives each backend's channel, with its token if it has one. */
    static Actions overSparkConnect(Function<String, Channel> channels) {
      return new Actions() {
        @Override
        public List<String> interrupt(String backend, String userId, String session, String op) {
          return SparkActions.interrupt(channels.apply(backend), userId, session, op);
        }

        @Override
        public List<String> interruptAll(String backend, String userId, String session) {
          return SparkActions.interrupt(channels.apply(backend), userId, session, null);
        }

        @Override
        public void release(String backend, String userId, String session) {
          SparkActions.release(channels.apply(backend), userId, session);
        }
      };
    }
  }

  /**
   * The parts of the proxy the API reads and acts through.
   *
   * @param backends each pool's backends and their health ({@code up}, {@code down}, {@code unknown})
   * @param policies empty without a policy section
   * @param playground null without a policy section
   * @param grants a pool's data access grants in force, null for a pool without a policy; null without a
   *     policy section
   * @param released told that an operator released a session, to forget its placement
   * @param audit takes the record of each operator action; null when audit is off
   * @param revocations the principals and tokens cut off; null when this proxy keeps none
   * @param anonymous {@code off}, {@code only} or {@code fallback}: whether callers without credentials pass
   */
  public record Views(
      LiveCalls live,
      Supplier<Map<String, Map<String, String>>> backends,
      Supplier<List<PoolPolicy>> policies,
      Playground playground,
      Function<String, DataAccess> grants,
      Actions actions,
      BiConsumer<String, String> released,
      Consumer<Map<String, Object>> audit,
      Clock clock,
      Revocations revocations,
      String anonymous) {}

  private final Views views;
  private final GrantReview grants;
  private final OperatorRecords records;
  private final RevocationApi revocations;
  private final EngineApi engines;

  public AdminApi(Views views) {
    this(views, null);
  }

  /** @param engines the pools of engines this replica runs; null: none */
  public AdminApi(Views views, EngineControl engines) {
    this.views = views;
    this.grants = new GrantReview(views.grants());
    this.records = new OperatorRecords(views.audit(), views.clock());
    this.revocations =
        new RevocationApi(views.revocations(), views.anonymous(), records, views.clock());
    this.engines = new EngineApi(engines, records);
  }

  /** Adds the API's and the console's paths to {@code routes}. */
  public AdminServer.Routes register(AdminServer.Routes routes) {
    ASSETS.forEach((path, file) -> routes.open(path, AdminHandler.getOnly(asset(file))));
    return engines
        .register(revocations.register(routes))
        .exact("/api/sessions", AdminHandler.getOnly(r -> AdminResponse.json(200, sessions())))
        .exact("/api/operations", AdminHandler.getOnly(r -> AdminResponse.json(200, operations())))
        .exact("/api/refusals", AdminHandler.getOnly(r -> AdminResponse.json(200, refusals())))
        .exact("/api/backends", AdminHandler.getOnly(r -> AdminResponse.json(200, backends())))
        .exact("/api/policy", AdminHandler.getOnly(r -> AdminResponse.json(200, policy())))
        .exact("/api/playground", postOnly(this::playground))
        .exact("/api/grants/who", AdminHandler.getOnly(grants::who))
        .exact("/api/grants/what", AdminHandler.getOnly(grants::what))
        .prefix("/api/operations/", postOnly(r -> action(r, "/api/operations/", "/interrupt")))
        .prefix("/api/sessions/", postOnly(r -> action(r, "/api/sessions/", "/release")));
  }

  private static AdminHandler postOnly(AdminHandler handler) {
    return r ->
        r.method().equals("POST")
            ? handler.handle(r)
            : AdminResponse.error(405, "use POST").withHeader("Allow", "POST");
  }

  private static AdminHandler asset(String file) {
    byte[] body;
    try (InputStream in = AdminApi.class.getResourceAsStream("/console/" + file)) {
      if (in == null) throw new IllegalStateException("console file missing: " + file);
      body = in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String type =
        file.endsWith(".html")
            ? "text/html; charset=utf-8"
            : file.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8";
    AdminResponse answer =
        new AdminResponse(200, type, body)
            .withHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY)
            .withHeader("Referrer-Policy", "no-referrer");
    return r -> answer;
  }

  Map<String, Object> sessions() {
    Instant now = views.clock().instant();
    List<Map<String, Object>> out = new ArrayList<>();
    for (LiveCalls.Session s : views.live().sessions()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("session_id", s.sessionId());
      m.put("principal", s.principal());
      m.put("pool", s.pool());
      m.put("backend", s.backend());
      m.put("first_seen", s.firstSeen().toString());
      m.put("age_seconds", seconds(s.firstSeen(), now));
      m.put("idle_seconds", seconds(s.lastSeen(), now));
      m.put("running_operations", s.runningOperations());
      out.add(m);
    }
    return Map.of("sessions", out);
  }

  Map<String, Object> operations() {
    Instant now = views.clock().instant();
    List<Map<String, Object>> out = new ArrayList<>();
    for (LiveCalls.Operation o : views.live().operations()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("operation_id", o.operationId());
      m.put("rpc", o.method());
      m.put("reattached", o.method().equals("ReattachExecute"));
      m.put("session_id", o.sessionId());
      m.put("principal", o.principal());
      m.put("pool", o.pool());
      m.put("backend", o.backend());
      m.put("started", o.started().toString());
      m.put("running_seconds", seconds(o.started(), now));
      m.put("plan_summary", o.planSummary());
      out.add(m);
    }
    return Map.of("operations", out);
  }

  Map<String, Object> refusals() {
    List<Map<String, Object>> out = new ArrayList<>();
    for (LiveCalls.Refusal r : views.live().refusals()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("time", r.time().toString());
      m.put("kind", r.kind());
      m.put("reason", r.reason());
      m.put("principal", r.principal() == null ? "unknown (authentication failed)" : r.principal());
      m.put("rpc", r.method());
      m.put("code", r.code());
      out.add(m);
    }
    return Map.of("refusals", out, "kept", LiveCalls.MAX_REFUSALS);
  }

  Map<String, Object> backends() {
    List<Map<String, Object>> pools = new ArrayList<>();
    views
        .backends()
        .get()
        .forEach(
            (pool, members) -> {
              List<Map<String, Object>> list = new ArrayList<>();
              members.forEach(
                  (address, state) -> list.add(Map.of("address", address, "state", state)));
              pools.add(Map.of("pool", pool, "backends", list));
            });
    return Map.of("pools", pools);
  }

  Map<String, Object> policy() {
    List<Map<String, Object>> pools = new ArrayList<>();
    for (PoolPolicy p : views.policies().get()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("pool", p.pool());
      m.put("file", p.files().isEmpty() ? null : p.files().get(0));
      m.put("files", p.files());
      m.put("rules", p.rules());
      m.put("default_effect", p.defaultEffect());
      m.put("reloads", p.reloads());
      m.put("rejected_reloads", p.rejected());
      m.put("last_reload", p.loadedAt().toString());
      m.put("last_error", p.lastError());
      pools.add(m);
    }
    return Map.of("enabled", views.playground() != null, "pools", pools);
  }

  private AdminResponse playground(AdminRequest r) {
    if (views.playground() == null) {
      return AdminResponse.error(404, "no policy section in the configuration: nothing to explain");
    }
    JsonNode body = r.jsonObject().orElse(null);
    if (body == null) {
      return AdminResponse.error(400, "send a JSON object: {\"pool\": ..., \"sql\": ...}");
    }
    String pool = body.path("pool").asText("");
    String sql = body.path("sql").asText("");
    String method = body.path("method").asText("ExecutePlan");
    JsonNode plan = body.path("plan");
    List<String> groups = new ArrayList<>();
    body.path("groups").forEach(g -> groups.add(g.asText()));
    String principal = body.path("principal").asText("playground");
    byte[] request = null;
    try {
      if (plan.isTextual()) {
        request = Base64.getDecoder().decode(plan.asText());
      } else if (plan.isObject()) {
        request = Explanation.requestFromJson(method, JSON.writeValueAsString(plan));
      } else if (sql.isBlank()) {
        return AdminResponse.error(400, "send sql, or a plan (protobuf JSON, or base64)");
      }
      if (request != null && !Explanation.METHODS.contains(method)) {
        return AdminResponse.error(400, "method must be one of " + Explanation.METHODS);
      }
      Explanation e = views.playground().explain(pool, sql, method, request, principal, groups);
      if (e == null) return AdminResponse.error(404, "no pool named '" + pool + "' with a policy");
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("pool", pool);
      m.put("facts", e.facts().stream().map(Object::toString).toList());
      m.put("decision", e.effect());
      m.put("rule", e.decision().rule());
      m.put("message", e.decision().refused() ? e.decision().message() : null);
      m.put("shadow", e.decision().shadow());
      m.put("lines", e.lines());
      return AdminResponse.json(200, m);
    } catch (IllegalArgumentException | IOException e) {
      return AdminResponse.error(400, e.getMessage());
    }
  }

  /** {@code POST <prefix><id><suffix>}: interrupt an operation or release a session. */
  private AdminResponse action(AdminRequest r, String prefix, String suffix) {
    String path = r.path();
    if (!path.endsWith(suffix) || path.length() <= prefix.length() + suffix.length()) {
      return AdminResponse.error(404, "no such action: " + path);
    }
    String id = path.substring(prefix.length(), path.length() - suffix.length());
    if (id.contains("/")) return AdminResponse.error(404, "no such action: " + path);
    return suffix.equals("/interrupt") ? interrupt(r.operator(), id) : release(r.operator(), id);
  }

  private AdminResponse interrupt(String operator, String operationId) {
    Optional<LiveCalls.Operation> found = views.live().operation(operationId);
    if (found.isEmpty()) {
      return AdminResponse.error(404, "no running operation " + operationId + " on this replica");
    }
    LiveCalls.Operation op = found.get();
    return act(
        operator,
        "interrupt",
        "operation",
        operationId,
        op.sessionId(),
        op.principal(),
        op.pool(),
        op.backend(),
        () -> {
          List<String> interrupted =
              views
                  .actions()
                  .interrupt(op.backend(), op.userId(), op.sessionId(), op.operationId());
          return interrupted.contains(operationId) ? "interrupted" : "not running on the backend";
        });
  }

  private AdminResponse release(String operator, String sessionId) {
    Optional<LiveCalls.Session> found = views.live().session(sessionId);
    if (found.isEmpty()) {
      return AdminResponse.error(404, "no live session " + sessionId + " on this replica");
    }
    LiveCalls.Session s = found.get();
    return act(
        operator,
        "release",
        "session",
        sessionId,
        sessionId,
        s.principal(),
        s.pool(),
        s.backend(),
        () -> {
          views.actions().release(s.backend(), s.userId(), s.sessionId());
          views.live().forget(s.userId(), s.sessionId());
          views.released().accept(s.userId(), s.sessionId());
          return "released";
        });
  }

  /**
   * Acts on a principal just revoked (here or through another replica): every session it has on this replica
   * has its operations interrupted and is released on its backend, each audited with the revoking operator.
   *
   * <p>Twice interrupted: Spark interrupts an operation by cancelling its jobs, and an operation still being
   * planned submits its job after that and runs it to the end (seen with Spark 4.0); releasing the session
   * then fails, as the operation is not over. A second interrupt, {@link #SETTLE} later, cancels that job.
   *
   * @return the sessions acted on
   */
  public int sweep(Revocation r) {
    if (r.kind() != Revocation.Kind.PRINCIPAL || views.live() == null) return 0;
    List<LiveCalls.Session> sessions =
        views.live().sessions().stream().filter(s -> s.principal().equals(r.name())).toList();
    if (sessions.isEmpty()) return 0;
    Map<String, Set<String>> interrupted = new LinkedHashMap<>();
    for (LiveCalls.Session s : sessions) {
      try {
        interrupted.put(
            s.sessionId(),
            new HashSet<>(views.actions().interruptAll(s.backend(), s.userId(), s.sessionId())));
      } catch (StatusRuntimeException e) {
        log.warn(
            "interrupting session {} of {} failed: {}", s.sessionId(), r.name(), e.getStatus());
      }
    }
    pause(SETTLE);
    for (LiveCalls.Session s : sessions) {
      act(
          r.operator(),
          "revoke-release",
          "session",
          s.sessionId(),
          s.sessionId(),
          s.principal(),
          s.pool(),
          s.backend(),
          () -> {
            Set<String> ids = interrupted.getOrDefault(s.sessionId(), new HashSet<>());
            ids.addAll(views.actions().interruptAll(s.backend(), s.userId(), s.sessionId()));
            views.actions().release(s.backend(), s.userId(), s.sessionId());
            views.live().forget(s.userId(), s.sessionId());
            views.released().accept(s.userId(), s.sessionId());
            return "interrupted " + ids.size() + " operations, released";
          });
    }
    return sessions.size();
  }

  /** How long interrupted operations get to end before they are interrupted again and released. */
  static final Duration SETTLE = Duration.ofSeconds(1);

  private static void pause(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Runs an operator action against the backend, audits it and answers: a backend that cannot be asked is a 502
   * naming the gRPC code, so the operator knows the action did not happen.
   */
  private AdminResponse act(
      String operator,
      String action,
      String targetKind,
      String target,
      String sessionId,
      String principal,
      String pool,
      String backend,
      Supplier<String> ask) {
    String outcome;
    int status;
    try {
      outcome = ask.get();
      status = 200;
    } catch (StatusRuntimeException e) {
      outcome = "failed: " + e.getStatus().getCode();
      status = 502;
    }
    audit(operator, action, targetKind, target, sessionId, principal, pool, backend, outcome);
    return answer(status, action, target, outcome);
  }

  private static AdminResponse answer(int status, String action, String target, String outcome) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("action", action);
    m.put("target", target);
    m.put("outcome", outcome);
    if (status != 200) m.put("error", "the backend could not be asked: " + outcome);
    return AdminResponse.json(status, m);
  }

  /** The operator's action, in the audit log when it is on, and in the proxy's log. */
  private void audit(
      String operator,
      String action,
      String targetKind,
      String target,
      String sessionId,
      String principal,
      String pool,
      String backend,
      String outcome) {
    Map<String, Object> details = new LinkedHashMap<>();
    details.put("session_id", sessionId);
    if (targetKind.equals("operation")) details.put("operation_id", target);
    details.put("principal", principal);
    details.put("pool", pool);
    details.put("backend", backend);
    records.write(operator, action, targetKind + ":" + target, outcome, details);
  }

  private static long seconds(Instant from, Instant to) {
    return Math.max(0, Duration.between(from, to).toSeconds());
  }
}
