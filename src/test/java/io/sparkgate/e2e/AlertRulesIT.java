package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.testing.DebianPackages;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The shipped alerting rules pass Prometheus's own checker, {@code promtool check rules}, and their unit tests,
 * {@code promtool test rules}, in which every alert fires in one case and stays quiet in another. Needs
 * {@code promtool} from the {@code prometheus} package ({@code .ci/setup} installs it); skipped without it,
 * a failure under {@code SPARKGATE_CI=1}.
 */
class AlertRulesIT {
  static final Path RULES = Path.of("deploy", "prometheus", "sparkgate-alerts.yaml");
  private static final Path TESTS = Path.of("deploy", "prometheus", "tests");

  private static String promtool;

  @BeforeAll
  static void findPromtool() {
    promtool =
        DebianPackages.require(
            "prometheus",
            "promtool, which checks and unit-tests the alerting rules",
            () ->
                DebianPackages.firstWorking(List.of("/usr/bin/promtool", "promtool"), "--version"));
  }

  @Test
  void rulesPassPromtoolCheck() throws Exception {
    Result check = promtool("check", "rules", RULES.toString());
    assertEquals(0, check.exit, check.output);
    assertTrue(check.output.contains("SUCCESS"), check.output);
  }

  @Test
  void rulesPassTheirUnitTests() throws Exception {
    List<String> command = new ArrayList<>(List.of("test", "rules"));
    command.addAll(testFiles().stream().map(Path::toString).toList());
    Result test = promtool(command.toArray(String[]::new));
    assertEquals(0, test.exit, test.output);
  }

  /** promtool passes an alert nobody tested; this makes "each alert fires once and stays quiet once" hold. */
  @Test
  void everyAlertHasAFiringAndAQuietCase() throws Exception {
    Set<String> alerts = new TreeSet<>();
    for (Object group : list(yaml(RULES).get("groups"))) {
      for (Object rule : list(map(group).get("rules"))) {
        Object name = map(rule).get("alert");
        if (name != null) {
          alerts.add(name.toString());
        }
      }
    }
    Set<String> firing = new TreeSet<>();
    Set<String> quiet = new TreeSet<>();
    for (Path file : testFiles()) {
      for (Object test : list(yaml(file).get("tests"))) {
        for (Object check : list(map(test).get("alert_rule_test"))) {
          Map<String, Object> c = map(check);
          String name = String.valueOf(c.get("alertname"));
          (list(c.get("exp_alerts")).isEmpty() ? quiet : firing).add(name);
        }
      }
    }
    assertFalse(alerts.isEmpty(), "no alerts in " + RULES);
    assertEquals(alerts, firing, "alerts with a case where they fire");
    assertEquals(alerts, quiet, "alerts with a case where they stay quiet");
  }

  /** The unit tests above would pass vacuously if promtool ignored expectations: a wrong one must fail. */
  @Test
  void aWrongExpectationFails(@TempDir Path dir) throws Exception {
    Path wrong = dir.resolve("wrong.yaml");
    Files.writeString(
        wrong,
        String.join(
            "\n",
            "rule_files: ['" + RULES.toAbsolutePath() + "']",
            "evaluation_interval: 1m",
            "tests:",
            "  - interval: 1m",
            "    input_series:",
            "      - {series: 'up{job=\"sparkgate\", instance=\"proxy-1:9464\"}', values: '1x10'}",
            "    alert_rule_test:",
            "      - eval_time: 5m",
            "        alertname: SparkgateDown",
            "        exp_alerts:",
            "          - exp_labels: {severity: critical, job: sparkgate, instance: 'proxy-1:9464'}",
            ""));
    Result test = promtool("test", "rules", wrong.toString());
    assertNotEquals(0, test.exit, test.output);
    assertTrue(test.output.contains("FAILED"), test.output);
    assertTrue(test.output.contains("SparkgateDown"), test.output);
  }

  @Test
  void aBrokenRuleFailsTheCheck(@TempDir Path dir) throws Exception {
    Path broken = dir.resolve("broken.yaml");
    Files.writeString(
        broken,
        String.join(
            "\n",
            "groups:",
            "  - name: broken",
            "    rules:",
            "      - alert: Broken",
            "        expr: rate(sparkgate_calls_total) > 0", // a range function without a range
            ""));
    Result check = promtool("check", "rules", broken.toString());
    assertNotEquals(0, check.exit, check.output);
  }

  static List<Path> testFiles() throws IOException {
    try (Stream<Path> files = Files.list(TESTS)) {
      List<Path> yaml = files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
      assertFalse(yaml.isEmpty(), "no rule tests in " + TESTS.toAbsolutePath());
      return yaml;
    }
  }

  record Result(int exit, String output) {}

  private static Result promtool(String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(promtool));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes(); // promtool's output is small: read to its end
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("promtool " + String.join(" ", args) + " did not finish");
    }
    String output = String.join(" ", command) + "\n" + new String(out, StandardCharsets.UTF_8);
    return new Result(p.exitValue(), output);
  }

  static Map<String, Object> yaml(Path file) throws IOException {
    return map(
        new Yaml(new SafeConstructor(new LoaderOptions()))
            .load(Files.readString(file, StandardCharsets.UTF_8)));
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object node) {
    return node instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  static List<?> list(Object node) {
    return node instanceof List<?> l ? l : List.of();
  }
}
