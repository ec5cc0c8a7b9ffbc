package io.sparkgate.opa;

/**
 * What OPA said about one question, or why it said nothing usable.
 *
 * @param outcome ALLOW, DENY, or ERROR (unreachable, slow, refused the request, or answered nonsense)
 * @param reason for a refusal: OPA's {@code reason}, or null; for an error: what went wrong, for the logs
 * @param rule for a refusal: OPA's {@code rule}, or null
 * @param decisionId the {@code decision_id} OPA returned (with decision logging on), or null
 * @param cached whether the answer is a remembered one (its decision id is the first asking's)
 */
public record Answer(
    Outcome outcome, String reason, String rule, String decisionId, boolean cached) {

  /** How OPA answered. */
  public enum Outcome {
    ALLOW,
    DENY,
    ERROR
  }

  static Answer error(String why) {
    return new Answer(Outcome.ERROR, why, null, null, false);
  }

  Answer fromCache() {
    return new Answer(outcome, reason, rule, decisionId, true);
  }
}
