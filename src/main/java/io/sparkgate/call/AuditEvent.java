package io.sparkgate.call;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * What stages record about one call for its audit record, beyond what the {@link Call} itself holds (the
 * principal, the request head, the decision, the route): why authentication failed, the refusal shown to the
 * client, the quota that refused it, the rules that only watched, the rewrites made, and the plan summary. Typed, so that the audit
 * package alone decides how a record spells them. Sealed when the call ends: what a stage learns after that
 * is not part of the record. Thread-safe: requests and responses are handled on different threads.
 */
public final class AuditEvent {
  /** One rewrite the decide stage made: the rule, the rewriter it named, and the change. */
  public record Rewrite(String rule, String rewriter, String change) {}

  /**
   * One access to data the grants checked: {@code target} is {@code table} or {@code path} ({@code namespace}
   * for a namespace as a whole or a listing), {@code grant} the grant that allowed it, or null when refused.
   */
  public record DataUse(String target, String name, String privilege, String grant) {}

  /**
   * What OPA said ({@code result}: allow, deny or error), with its decision id to join OPA's decision log;
   * {@code cached}: a remembered decision, whose id is the one OPA logged when first asked.
   */
  public record Opa(String decisionId, String result, String rule, String error, boolean cached) {}

  /** Everything recorded, as it was when the call ended. */
  public record Sealed(
      String authFailure,
      String refusal,
      String quota,
      List<String> shadowDecisions,
      List<String> auditRules,
      List<Rewrite> rewrites,
      List<DataUse> data,
      Supplier<Map<String, Object>> planSummary,
      Opa opa) {}

  @GuardedBy("this")
  private String authFailure;

  @GuardedBy("this")
  private String refusal;

  @GuardedBy("this")
  private String quota;

  // A long stream matches the same rules message after message: each is kept once.
  @GuardedBy("this")
  private final Set<String> shadowDecisions = new LinkedHashSet<>();

  @GuardedBy("this")
  private final Set<String> auditRules = new LinkedHashSet<>();

  @GuardedBy("this")
  private final List<Rewrite> rewrites = new ArrayList<>();

  // Every message of a stream is checked: each access is kept once.
  @GuardedBy("this")
  private final Set<DataUse> data = new LinkedHashSet<>();

  @GuardedBy("this")
  private Supplier<Map<String, Object>> planSummary;

  @GuardedBy("this")
  private Opa opa;

  @GuardedBy("this")
  private boolean sealed;

  // Set once when the call opens, before anything can read it; never sealed away.
  private volatile String traceId;

  AuditEvent() {}

  /** Why the authenticate stage refused the call (a reason name, lower case). */
  public synchronized void authFailure(String reason) {
    if (!sealed) authFailure = reason;
  }

  /** The id of the trace the call's span belongs to (32 hex digits), for joining the two. */
  public void traceId(String traceId) {
    this.traceId = traceId;
  }

  /** The call's trace id; null without tracing. */
  public String traceId() {
    return traceId;
  }

  /** The refusal the client was shown, rule and message. */
  public synchronized void refusal(String text) {
    if (!sealed) refusal = text;
  }

  /** The quota that refused the call ({@code per_principal.concurrent_operations} ...). */
  public synchronized void quota(String name) {
    if (!sealed) quota = name;
  }

  /** A rule in shadow mode that would have decided (its name and effect). */
  public synchronized void shadowDecision(String decision) {
    if (!sealed) shadowDecisions.add(decision);
  }

  /** A rule whose effect is only to be recorded. */
  public synchronized void auditRule(String rule) {
    if (!sealed) auditRules.add(rule);
  }

  public synchronized void rewrite(Rewrite rewrite) {
    if (!sealed && !rewrites.contains(rewrite)) rewrites.add(rewrite);
  }

  /** Accesses to data the grants checked, with the grant that allowed each (or none, refused). */
  public synchronized void data(List<DataUse> uses) {
    if (!sealed) data.addAll(uses);
  }

  /**
   * The plan summary, computed by the audit writer off the call's thread: {@code summary} must only read what
   * no longer changes. A later one replaces it.
   */
  public synchronized void planSummary(Supplier<Map<String, Object>> summary) {
    if (!sealed) planSummary = summary;
  }

  /** OPA's answer on a message; a stream keeps the first, unless a later one refused or failed. */
  public synchronized void opa(Opa answer) {
    if (!sealed
        && (opa == null || ("allow".equals(opa.result()) && !"allow".equals(answer.result())))) {
      opa = answer;
    }
  }

  /**
   * What is recorded so far, without ending recording: for views of calls still running (the admin API's
   * operations and refusals), which read what the stages recorded rather than deciding anything again.
   */
  public synchronized Sealed snapshot() {
    return new Sealed(
        authFailure,
        refusal,
        quota,
        List.copyOf(shadowDecisions),
        List.copyOf(auditRules),
        List.copyOf(rewrites),
        List.copyOf(data),
        planSummary,
        opa);
  }

  /** Ends recording; what is recorded later is ignored. */
  public synchronized Sealed seal() {
    sealed = true;
    return snapshot();
  }
}
