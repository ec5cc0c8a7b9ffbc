package io.sparkgate.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

final class VerdictTest {

  private static Verdict verdict;

  @BeforeAll
  static void load() throws Exception {
    verdict = Verdict.forPolicy(CompatProxy.POLICY);
  }

  @Test
  void remedy_isTheLastSentenceWithoutPlaceholders() {
    assertEquals(
        "Use built-in SQL functions instead.",
        Verdict.remedy(
            "The function {name}() calls arbitrary Java methods and is not allowed on this shared Spark"
                + " server. Use built-in SQL functions instead."));
  }

  @Test
  void everyRefusalScenario_namesARuleWithARemedyInTheShippedPolicy() {
    for (Scenario s : Scenario.values()) {
      s.refusedBy().ifPresent(rule -> assertTrue(verdict.remedyOf(rule).length() > 10, rule));
    }
  }

  @Test
  void refusal_passesOnlyWithRuleAndRemedy() {
    String remedy = verdict.remedyOf("no-reflection");
    String good =
        "[SPARKGATE_POLICY_DENIED] rule 'no-reflection': The function reflect() ... " + remedy;
    assertEquals(Verdict.Status.PASS, judge(Scenario.REFLECT, "refused", good).status());
    assertEquals(
        Verdict.Status.FAIL,
        judge(Scenario.REFLECT, "refused", "rule 'no-reflection': not allowed").status());
    assertEquals(
        Verdict.Status.FAIL,
        judge(Scenario.REFLECT, "refused", "rule 'no-user-code': " + remedy).status());
    assertEquals(
        Verdict.Status.FAIL,
        judge(Scenario.REFLECT, "refused", good + " [INTERNAL_ERROR] Cannot find main error class")
            .status());
    assertEquals(Verdict.Status.FAIL, judge(Scenario.REFLECT, "ran", "[/root]").status());
  }

  @Test
  void workingScenario_passesOnPassOnly_andUnsupportedIsNeither() {
    assertEquals(Verdict.Status.PASS, judge(Scenario.RANGE, "pass", "10").status());
    assertEquals(Verdict.Status.FAIL, judge(Scenario.RANGE, "fail", "9").status());
    assertEquals(
        Verdict.Status.UNSUPPORTED, judge(Scenario.UDTF, "unsupported", "no UDTF").status());
  }

  @Test
  void directRerun_classifiesSkew() {
    assertTrue(CompatIT.failsDirectlyToo(new Outcome(Scenario.CREATE_DATAFRAME, "fail", "x")));
    assertTrue(!CompatIT.failsDirectlyToo(new Outcome(Scenario.CREATE_DATAFRAME, "pass", "")));
    assertTrue(!CompatIT.failsDirectlyToo(new Outcome(Scenario.REFLECT, "ran", "[/root]")));
    assertTrue(
        CompatIT.failsDirectlyToo(new Outcome(Scenario.REFLECT, "refused", "ClassNotFound")));
  }

  @Test
  void supportedBySpark_followsMajorVersions() {
    assertTrue(SparkVersions.supported("4.0.0", "4.1.1"));
    assertTrue(SparkVersions.supported("4.0.5", "4.0.0"));
    assertTrue(!SparkVersions.supported("4.1.1", "4.0.0"));
    assertTrue(SparkVersions.supported("3.5.7", "4.2.0"));
    assertTrue(!SparkVersions.supported("4.0.0", "3.5.7"));
    assertTrue(SparkVersions.supported("v0.1.1-0.20250826122459-0e3d565b63e6", "3.5.7"));
  }

  private static Verdict.Judgement judge(Scenario s, String outcome, String detail) {
    return verdict.judge(new Outcome(s, outcome, detail));
  }
}
