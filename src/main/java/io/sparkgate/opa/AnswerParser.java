package io.sparkgate.opa;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;

/**
 * Reads OPA's Data API answer, {@code {"result": ..., "decision_id": ...}}. The result is {@code true}, {@code
 * false}, or {@code {"allow": bool, "reason": string, "rule": string}} (reason and rule optional). No result
 * (the document is undefined: a wrong path, or a package that did not load) and anything else is an error,
 * never an allow: a policy that does not say yes has not said yes.
 */
final class AnswerParser {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What OPA's reason and rule may reach a client as: one short line each. */
  static final int MAX_REASON = 500;

  static final int MAX_RULE = 100;

  private AnswerParser() {}

  static Answer parse(byte[] body) {
    JsonNode root;
    try {
      root = JSON.readTree(body);
    } catch (IOException e) {
      return Answer.error("OPA's answer is not JSON");
    }
    if (root == null || !root.isObject()) return Answer.error("OPA's answer is not a JSON object");
    JsonNode id = root.get("decision_id");
    String decisionId = id != null && id.isTextual() ? id.asText() : null;
    JsonNode result = root.get("result");
    if (result == null) {
      return Answer.error(
          "OPA returned no result: the decision document is undefined (check policy.opa.path and that"
              + " the bundle loaded)");
    }
    if (result.isBoolean()) {
      return new Answer(
          result.booleanValue() ? Answer.Outcome.ALLOW : Answer.Outcome.DENY,
          null,
          null,
          decisionId,
          false);
    }
    if (!result.isObject()) {
      return Answer.error(
          "OPA's result is neither a boolean nor an object: " + result.getNodeType());
    }
    JsonNode allow = result.get("allow");
    if (allow == null || !allow.isBoolean()) {
      return Answer.error("OPA's result has no boolean 'allow'");
    }
    if (!textOrAbsent(result.get("reason")) || !textOrAbsent(result.get("rule"))) {
      return Answer.error("OPA's result has a 'reason' or 'rule' that is not a string");
    }
    String reason = text(result.get("reason"), MAX_REASON);
    String rule = text(result.get("rule"), MAX_RULE);
    return new Answer(
        allow.booleanValue() ? Answer.Outcome.ALLOW : Answer.Outcome.DENY,
        reason,
        rule,
        decisionId,
        false);
  }

  private static boolean textOrAbsent(JsonNode node) {
    return node == null || node.isNull() || node.isTextual();
  }

  /** A string field made one printable line of at most {@code max} characters; null when absent or empty. */
  private static String text(JsonNode node, int max) {
    if (node == null || node.isNull()) return null;
    String s = node.asText().replaceAll("\\p{Cntrl}+", " ").strip();
    if (s.isEmpty()) return null;
    return s.length() > max ? s.substring(0, max - 3) + "..." : s;
  }
}
