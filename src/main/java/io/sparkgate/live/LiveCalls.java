package io.sparkgate.live;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.grpc.Status;
import io.sparkgate.call.AuditEvent;
import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.call.Route;
import io.sparkgate.call.Stage;
import io.sparkgate.forward.CallHook;
import io.sparkgate.inspect.RequestHead;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The live view of this replica: a stage, placed just inside the audit stage, that records what the other
 * stages computed for each call (principal, route, request head, decision, plan summary) when its first
 * request message was forwarded and when it ends. Sessions are known from their first forwarded call on this
 * replica and dropped on a successful ReleaseSession or after {@code idleTimeout} without a call; operations
 * are ExecutePlan and ReattachExecute calls in flight; refusals (policy, authentication, quota) go to a ring
 * of the last {@link #MAX_REFUSALS}. The hot path does a map update per call and takes no lock a reader
 * holds for long; every collection is bounded.
 */
public final class LiveCalls implements Stage {
  /** Refusals kept. */
  public static final int MAX_REFUSALS = 200;

  /** Sessions kept at most: beyond it, new sessions are not shown (idle ones are dropped first). */
  static final int MAX_SESSIONS = 10_000;

  private static final Set<String> OPERATIONS = Set.of("ExecutePlan", "ReattachExecute");

  /** A session as this replica knows it. */
  public record Session(
      String sessionId,
      String userId,
      String principal,
      String pool,
      String backend,
      Instant firstSeen,
      Instant lastSeen,
      int runningOperations) {}

  /**
   * A running operation. {@code planSummary} is the audit record's plan summary (SQL literals redacted unless
   * {@code audit.include_literals}); empty without a policy, which is what builds it.
   */
  public record Operation(
      String operationId,
      String method,
      String sessionId,
      String userId,
      String principal,
      String pool,
      String backend,
      Instant started,
      Map<String, Object> planSummary) {}

  /**
   * A refused call: {@code kind} policy, authentication, quota or route; {@code reason} the policy rule, the
   * authentication failure, the quota, or {@code no route}; {@code principal} null when authentication failed
   * (unknown).
   */
  public record Refusal(
      Instant time, String kind, String reason, String principal, String method, String code) {}

  private record Key(String userId, String sessionId) {}

  private static final class Tracked {
    final Key key;
    final String principal;
    final String pool;
    final String backend;
    final Instant firstSeen;
    volatile Instant lastSeen;

    Tracked(Key key, String principal, Route route, Instant now) {
      this.key = key;
      this.principal = principal;
      this.pool = route.pool();
      this.backend = route.backend();
      this.firstSeen = now;
      this.lastSeen = now;
    }
  }

  /** An operation in flight: identity-keyed, since a reattach may overlap the stream it replaces. */
  private static final class Running {
    final Call call;
    final Key key;
    final String operationId;
    final Route route;
    final Instant started;

    Running(Call call, Key key, String operationId, Route route, Instant started) {
      this.call = call;
      this.key = key;
      this.operationId = operationId;
      this.route = route;
      this.started = started;
    }
  }

  private final Clock clock;
  private final Duration idleTimeout;
  private final Map<Key, Tracked> sessions = new ConcurrentHashMap<>();
  private final Set<Running> running = ConcurrentHashMap.newKeySet();

  @GuardedBy("refusals")
  private final ArrayDeque<Refusal> refusals = new ArrayDeque<>();

  public LiveCalls(Clock clock, Duration idleTimeout) {
    this.clock = clock;
    if (idleTimeout.isNegative() || idleTimeout.isZero()) {
      throw new IllegalArgumentException("idleTimeout must be positive, got " + idleTimeout);
    }
    this.idleTimeout = idleTimeout;
  }

  @Override
  public CallHook open(Call call) {
    return new Watching(call);
  }

  private final class Watching implements CallHook {
    private final Call call;
    private boolean seen; // request thread only
    private volatile Running op;
    private volatile Key session;

    Watching(Call call) {
      this.call = call;
    }

    @Override
    public void onAccepted(byte[] forwarded) {
      if (seen) return;
      seen = true;
      RequestHead head = call.head();
      Route route = call.route();
      if (route == null || head.sessionId().isEmpty()) return;
      Instant now = clock.instant();
      Key key = new Key(head.userId(), head.sessionId());
      session = key;
      Tracked t = sessions.get(key);
      if (t == null) {
        if (sessions.size() >= MAX_SESSIONS) expire(now);
        if (sessions.size() < MAX_SESSIONS) {
          Principal p = call.principal();
          sessions.putIfAbsent(
              key, new Tracked(key, p == null ? head.userId() : p.name(), route, now));
        }
      } else {
        t.lastSeen = now;
      }
      if (OPERATIONS.contains(call.method())) {
        Running r = new Running(call, key, head.operationId(), route, now);
        op = r;
        running.add(r);
      }
    }

    @Override
    public void onClose(Status status) {
      Running r = op;
      if (r != null) running.remove(r);
      Key key = session;
      if (status.isOk()) {
        if (key != null && "ReleaseSession".equals(call.method())) forget(key);
        return;
      }
      refused(call, status).ifPresent(LiveCalls.this::record);
    }
  }

  /** The refusal a call that ended with {@code status} records, if the stages recorded one. */
  private Optional<Refusal> refused(Call call, Status status) {
    AuditEvent.Sealed event = call.audit().snapshot();
    Principal p = call.principal();
    String name = p == null ? null : p.name();
    String code = status.getCode().name();
    Instant now = clock.instant();
    if (event.authFailure() != null
        || (p == null && status.getCode() == Status.Code.UNAUTHENTICATED)) {
      String why = event.authFailure() == null ? "failed" : event.authFailure();
      return Optional.of(new Refusal(now, "authentication", why, null, call.method(), code));
    }
    if (event.quota() != null) {
      return Optional.of(new Refusal(now, "quota", event.quota(), name, call.method(), code));
    }
    Call.Decided d = call.decided();
    if (d != null && "deny".equals(d.effect())) {
      return Optional.of(new Refusal(now, "policy", d.rule(), name, call.method(), code));
    }
    if (p != null && call.pool() == null && status.getCode() == Status.Code.PERMISSION_DENIED) {
      // Authenticated, and refused before a pool was chosen: no route admits the principal.
      return Optional.of(new Refusal(now, "route", "no route", name, call.method(), code));
    }
    return Optional.empty();
  }

  /** Adds a refusal to the ring (the oldest goes beyond {@link #MAX_REFUSALS}). */
  void record(Refusal r) {
    synchronized (refusals) {
      if (refusals.size() == MAX_REFUSALS) refusals.removeFirst();
      refusals.addLast(r);
    }
  }

  private void forget(Key key) {
    sessions.remove(key);
  }

  /** Forgets a session released by other means than a client's call (an operator's release). */
  public void forget(String userId, String sessionId) {
    forget(new Key(userId, sessionId));
  }

  private void expire(Instant now) {
    Instant cutoff = now.minus(idleTimeout);
    sessions.values().removeIf(t -> t.lastSeen.isBefore(cutoff) && !busy(t.key));
  }

  private boolean busy(Key key) {
    for (Running r : running) if (r.key.equals(key)) return true;
    return false;
  }

  /** Live sessions, oldest first; a session idle for the idle timeout is dropped here. */
  public List<Session> sessions() {
    expire(clock.instant());
    Map<Key, Integer> counts = new HashMap<>();
    for (Running r : running) counts.merge(r.key, 1, Integer::sum);
    List<Session> out = new ArrayList<>();
    for (Tracked t : sessions.values()) {
      out.add(
          new Session(
              t.key.sessionId(),
              t.key.userId(),
              t.principal,
              t.pool,
              t.backend,
              t.firstSeen,
              t.lastSeen,
              counts.getOrDefault(t.key, 0)));
    }
    out.sort(Comparator.comparing(Session::firstSeen).thenComparing(Session::sessionId));
    return out;
  }

  /** The live session of this id (session ids are UUIDs: the first found, whichever user). */
  public Optional<Session> session(String sessionId) {
    return sessions().stream().filter(s -> s.sessionId().equals(sessionId)).findFirst();
  }

  /** Running operations, oldest first. */
  public List<Operation> operations() {
    List<Operation> out = new ArrayList<>();
    for (Running r : running) out.add(operation(r));
    out.sort(Comparator.comparing(Operation::started).thenComparing(Operation::operationId));
    return out;
  }

  /** The running operation of this id (its ExecutePlan, or a reattach of it). */
  public Optional<Operation> operation(String operationId) {
    if (operationId.isEmpty()) return Optional.empty();
    for (Running r : running) {
      if (r.operationId.equals(operationId)) return Optional.of(operation(r));
    }
    return Optional.empty();
  }

  private static Operation operation(Running r) {
    Principal p = r.call.principal();
    Supplier<Map<String, Object>> summary = r.call.audit().snapshot().planSummary();
    return new Operation(
        r.operationId,
        r.call.method(),
        r.key.sessionId(),
        r.key.userId(),
        p == null ? r.key.userId() : p.name(),
        r.route.pool(),
        r.route.backend(),
        r.started,
        summary == null ? Map.of() : summary.get());
  }

  /** Recent refusals, newest first. */
  public List<Refusal> refusals() {
    List<Refusal> out;
    synchronized (refusals) {
      out = new ArrayList<>(refusals);
    }
    java.util.Collections.reverse(out);
    return out;
  }
}
