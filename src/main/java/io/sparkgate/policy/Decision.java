package io.sparkgate.policy;

import io.grpc.Status;
import io.sparkgate.grants.Verdict;
import java.util.List;

/**
 * The outcome of evaluating a policy on one request message.
 *
 * @param effect ALLOW, DENY or REWRITE (never AUDIT: audit rules only add to {@code audits})
 * @param rule the deciding rule, or {@code "default"} when no enforced rule matched
 * @param message for a refusal: what was refused and what to do instead
 * @param shadow what shadow rules that matched would have decided, e.g. {@code "deny:no-udf"}
 * @param audits names of audit rules that matched
 * @param data what the grants said (the accesses and the grant allowing each), or null when not checked
 */
public record Decision(
    Effect effect,
    String rule,
    String message,
    Status.Code code,
    String errorClass,
    String sqlState,
    String rewriter,
    List<String> shadow,
    List<String> audits,
    Verdict data) {

  public static final String DEFAULT_RULE = "default";

  /** The rule a refusal by the grants is recorded under: an access no grant gives the caller. */
  public static final String DATA_ACCESS_RULE = "data-access";

  /** The rule for data Sparkgate cannot resolve with certainty while grants are in force. */
  public static final String DATA_UNRESOLVED_RULE = "data-unresolved";

  static final String ERROR_CLASS = "SPARKGATE_POLICY_DENIED";
  static final String SQL_STATE = "42501";

  public Decision {
    shadow = List.copyOf(shadow);
    audits = List.copyOf(audits);
  }

  public boolean refused() {
    return effect == Effect.DENY;
  }

  /** This rule's refusal instead of its rewrite, when the rewriter cannot rewrite safely ({@code why}). */
  Decision refusedBecause(Status why) {
    return new Decision(
        Effect.DENY,
        rule,
        why.getDescription(),
        why.getCode(),
        errorClass,
        sqlState,
        null,
        shadow,
        audits,
        data);
  }

  /** This decision with what the grants said. */
  Decision withData(Verdict verdict) {
    return new Decision(
        effect, rule, message, code, errorClass, sqlState, rewriter, shadow, audits, verdict);
  }

  /** A refusal not tied to a policy rule's own message (errors, unknown profile). */
  static Decision refusal(
      String rule, String message, Status.Code code, List<String> shadow, List<String> audits) {
    return new Decision(
        Effect.DENY, rule, message, code, ERROR_CLASS, SQL_STATE, null, shadow, audits, null);
  }
}
