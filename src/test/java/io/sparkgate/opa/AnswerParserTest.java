package io.sparkgate.opa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

final class AnswerParserTest {
  private static Answer parse(String json) {
    return AnswerParser.parse(json.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void booleans() {
    Answer yes = parse("{\"result\": true, \"decision_id\": \"d-1\"}");
    assertEquals(Answer.Outcome.ALLOW, yes.outcome());
    assertEquals("d-1", yes.decisionId());
    Answer no = parse("{\"result\": false}");
    assertEquals(Answer.Outcome.DENY, no.outcome());
    assertNull(no.reason());
    assertNull(no.decisionId());
  }

  @Test
  void objects_keepReasonAndRule_asOneShortLine() {
    Answer a =
        parse(
            "{\"decision_id\":\"x\",\"result\":{\"allow\":false,\"reason\":\"no\\nway\",\"rule\":\"r1\"}}");
    assertEquals(Answer.Outcome.DENY, a.outcome());
    assertEquals("no way", a.reason());
    assertEquals("r1", a.rule());
    assertEquals("x", a.decisionId());
    assertEquals(Answer.Outcome.ALLOW, parse("{\"result\":{\"allow\":true}}").outcome());
    String longReason = "a".repeat(2000);
    Answer cut = parse("{\"result\":{\"allow\":false,\"reason\":\"" + longReason + "\"}}");
    assertEquals(AnswerParser.MAX_REASON, cut.reason().length());
  }

  @Test
  void undefinedOrMalformed_isAnError_neverAnAllow() {
    for (String bad :
        new String[] {
          "{}",
          "{\"decision_id\":\"d\"}",
          "{\"result\": \"yes\"}",
          "{\"result\": 1}",
          "{\"result\": {\"reason\": \"x\"}}",
          "{\"result\": {\"allow\": \"true\"}}",
          "{\"result\": {\"allow\": false, \"reason\": 3}}",
          "[true]",
          "not json",
        }) {
      Answer a = parse(bad);
      assertEquals(Answer.Outcome.ERROR, a.outcome(), bad);
      assertTrue(a.reason() != null && !a.reason().isEmpty(), bad);
    }
    assertTrue(parse("{}").reason().contains("undefined"));
  }
}
