package io.sparkgate.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.cli.CliPolicyCompiler;
import io.sparkgate.cli.PolicyCommand;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/** The shipped policies: their own test files pass, and every UNCLASSIFIED subkind the inspector emits is refused. */
final class ShippedPoliciesTest {
  private static final Path POLICIES = Path.of("policies");
  private static final Pattern UNCLASSIFIED =
      Pattern.compile("UNCLASSIFIED, \"([a-z_]+)\"|unclassified\\(\"([a-z_]+)\"");

  /** Every subkind written in the inspector's source, so a new one is covered without editing this test. */
  static Set<String> unclassifiedSubkinds() throws IOException {
    Set<String> out = new TreeSet<>();
    try (Stream<Path> files = Files.list(Path.of("src/main/java/io/sparkgate/inspect"))) {
      for (Path f : files.toList()) {
        Matcher m = UNCLASSIFIED.matcher(Files.readString(f));
        while (m.find()) out.add(m.group(1) != null ? m.group(1) : m.group(2));
      }
    }
    return out;
  }

  static List<Path> shippedPolicies() throws IOException {
    try (Stream<Path> s = Files.list(POLICIES)) {
      return s.filter(p -> p.toString().endsWith(".yaml") && !p.toString().endsWith("_test.yaml"))
          .sorted()
          .toList();
    }
  }

  @Test
  void theSweepFindsTheKnownSubkinds() throws IOException {
    Set<String> found = unclassifiedSubkinds();
    assertTrue(
        found.containsAll(
            Set.of(
                "unknown_case",
                "unknown_field",
                "unknown_extension",
                "unparseable_sql",
                "plan_too_deep",
                "inspector_error",
                "variable_substitution",
                "incomplete_artifact")),
        found.toString());
  }

  @Test
  void theMixedLakehousePolicyIsItsRuleThenTheSharedServerPolicy() {
    Policy shared = CliPolicyCompiler.get().compile(POLICIES.resolve("shared-server.yaml"));
    Policy mixed = CliPolicyCompiler.get().compile(POLICIES.resolve("mixed-lakehouse.yaml"));
    List<String> expected =
        new java.util.ArrayList<>(List.of("iceberg-time-travel-on-mixed-server"));
    expected.addAll(shared.ruleNames());
    assertEquals(expected, mixed.ruleNames());
    assertEquals(
        List.of(
            POLICIES.resolve("mixed-lakehouse.yaml").toString(),
            POLICIES.resolve("shared-server.yaml").toString()),
        mixed.files());
  }

  @ParameterizedTest
  @MethodSource("shippedPolicies")
  void everyUnclassifiedSubkindIsRefused(Path file) throws IOException {
    Policy p = CliPolicyCompiler.get().compile(file);
    BackendProfile profile = new BackendProfile("4.0.0", List.of(), java.util.Map.of(), null);
    for (String subkind : unclassifiedSubkinds()) {
      for (List<String> groups : List.of(List.<String>of(), List.of("sparkgate-admins"))) {
        Decision d =
            Policies.decide(p, groups, profile, Policies.fact(Fact.Kind.UNCLASSIFIED, subkind));
        assertEquals(Effect.DENY, d.effect(), file + ": " + subkind + " for " + groups);
      }
    }
  }

  @Test
  void policyTestCommandPassesOnTheShippedPolicies() {
    StringWriter out = new StringWriter();
    CommandLine cli = new CommandLine(new PolicyCommand());
    cli.setOut(new PrintWriter(out));
    int code = cli.execute("test", POLICIES.toString());
    assertEquals(0, code, out.toString());
    assertFalse(out.toString().contains("FAIL"), out.toString());
    assertEquals(0, new CommandLine(new PolicyCommand()).execute("check", POLICIES.toString()));
  }

  @Test
  void policyTestCommandFailsOnAFailingCase(@org.junit.jupiter.api.io.TempDir Path dir)
      throws IOException {
    Files.writeString(dir.resolve("p.yaml"), "default: allow\nrules: []\n");
    Files.writeString(
        dir.resolve("p_test.yaml"), "cases:\n  - {name: wrong, sql: SELECT 1, expect: deny}\n");
    StringWriter out = new StringWriter();
    CommandLine cli = new CommandLine(new PolicyCommand());
    cli.setOut(new PrintWriter(out));
    assertEquals(1, cli.execute("test", dir.toString()));
    assertTrue(
        out.toString().contains("FAIL p_test.yaml:2 wrong: expected deny, got allow"),
        out.toString());
  }
}
