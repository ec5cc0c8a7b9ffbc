package io.sparkgate.policy;

import static io.sparkgate.policy.Policies.compile;
import static io.sparkgate.policy.Policies.fact;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.cli.CliPolicyCompiler;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Fact.Kind;
import io.sparkgate.inspect.Facts;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

final class RuleIndexTest {
  private static final Kind[] KINDS = {
    Kind.FUNCTION_CALL, Kind.TABLE_READ, Kind.CONFIG_SET, Kind.USER_CODE, Kind.SQL
  };

  /** Pieces of names and globs; some have cases that do not map one to one (İ, ı, Kelvin K, ſ, ß, sigmas). */
  private static final String[] PIECES = {
    "a",
    "ab",
    "B",
    "nothing_",
    "x1",
    "İ",
    "ı",
    "i",
    "I",
    "\u212A",
    "k",
    "ſ",
    "s",
    "ß",
    "Σ",
    "ς",
    "\uD83D\uDE00",
    "."
  };

  private static final String[] RPCS = {"ExecutePlan", "Config", "AnalyzePlan", "executeplan"};
  private static final BackendProfile WITH_EXT =
      new BackendProfile("4.0.0", List.of("ext.A"), Map.of(), null);
  private static final BackendProfile WITHOUT_EXT =
      new BackendProfile("4.0.0", List.of(), Map.of(), null);

  /**
   * The indexed evaluation decides as evaluating every rule in order does (the same decision, rule, message,
   * shadow and audit lists), over random policies and requests. Rules that test the backend profile are, while
   * it is unknown, evaluated only for requests with a fact of a kind they need, as before indexing.
   */
  @Test
  void decidesAsEvaluatingEveryRuleDoes() {
    Random random = new Random(7);
    int pruned = 0;
    int decidedByRule = 0;
    int listed = 0;
    for (int p = 0; p < 300; p++) {
      String yaml = randomPolicy(random);
      Policy policy = compile(yaml);
      RuleIndex index = new RuleIndex(policy.rules());
      for (int q = 0; q < 60; q++) {
        EvalInput in = randomRequest(random);
        BitSet all = everyRuleToEvaluate(policy, in);
        Decision expected = policy.evaluate(in, all);
        assertEquals(expected, policy.evaluate(in), () -> yaml + "\n" + in);
        if (index.candidates(in).cardinality() < all.cardinality()) pruned++;
        if (!expected.rule().equals(Decision.DEFAULT_RULE)) decidedByRule++;
        listed += expected.shadow().size() + expected.audits().size();
      }
    }
    // The cases exercise the index, rules that decide and rules that are only listed.
    assertTrue(
        pruned > 15000 && decidedByRule > 5000 && listed > 20000,
        pruned + " " + decidedByRule + " " + listed);
  }

  @Test
  void rulesThatTestTheProfileAreGuardedByFactKindAlone() {
    Policy p =
        compile(
            """
        default: allow
        rules:
          - name: mixed
            description: d
            effect: deny
            when:
              any:
                - all:
                    - backend: {extensions_all: [a.Hudi]}
                    - fact: TIME_TRAVEL
                      attr: {catalog_impl: org.apache.iceberg.spark.SparkCatalog}
                - fact: TABLE_READ
                  attr: {name: secret}
        """);
    assertEquals(
        Set.of("mixed"), candidates(p, null, fact(Kind.TABLE_READ, "sql", "name", "public")));
    assertEquals(
        Set.of("mixed"),
        candidates(p, null, fact(Kind.TIME_TRAVEL, "VERSION", "catalog_impl", "unknown")));
    assertEquals(Set.of(), candidates(p, null, fact(Kind.SQL, "query")));
  }

  @Test
  void rulesAreFoundByRpc() {
    Policy p =
        compile(
            """
        default: allow
        rules:
          - {name: config, description: d, effect: deny, match: {rpc: Config}}
          - {name: plans, description: d, effect: deny, match: {rpc: ["*Plan"]}}
          - {name: analyze, description: d, effect: deny, match: {rpc: [Analyze*]}}
        """);
    // "*Plan" has no literal prefix: that rule is found for every RPC, and its glob decides.
    assertEquals(Set.of("plans"), candidatesForRpc(p, "ExecutePlan"));
    assertEquals(Set.of("plans", "analyze"), candidatesForRpc(p, "analyzeplan"));
    assertEquals(Set.of("config", "plans"), candidatesForRpc(p, "CONFIG"));
  }

  /** The shape of PolicyBench: none of 1000 rules is evaluated for its request, and a matching fact finds its rule. */
  @Test
  void benchmarkShapedRulesAreNotEvaluatedForARequestTheyCannotMatch() {
    String[] kinds = {"FUNCTION_CALL", "TABLE_READ", "CONFIG_SET", "USER_CODE"};
    StringBuilder y = new StringBuilder("default: allow\nrules:\n");
    for (int i = 0; i < 1000; i++) {
      String kind = kinds[i % kinds.length];
      y.append("  - {name: rule-")
          .append(i)
          .append(", description: d, effect: deny, when: {fact: ")
          .append(kind);
      if (!kind.equals("USER_CODE"))
        y.append(", attr: {name: [\"nothing_").append(i).append("*\"]}");
      y.append("}}\n");
    }
    Policy p = compile(y.toString());
    Fact upper = fact(Kind.FUNCTION_CALL, "scalar", "name", "upper");
    Fact orders = fact(Kind.TABLE_READ, "sql", "name", "orders", "database", "sales");
    assertEquals(Set.of(), candidates(p, null, fact(Kind.SQL, "query"), upper, orders));
    assertEquals(
        Set.of("rule-5"), candidates(p, null, fact(Kind.TABLE_READ, "sql", "name", "NOTHING_5x")));
    assertEquals(
        Set.of("rule-4", "rule-40", "rule-400"),
        candidates(p, null, fact(Kind.FUNCTION_CALL, "", "name", "nothing_400")));
  }

  /**
   * An ordinary query is checked only against the allowlists of the fact kinds it has (an allowlist cannot be
   * filed under a literal: it matches what is not listed); every rule keyed by a literal is skipped.
   */
  @Test
  void shippedPoliciesEvaluateAlmostNoRuleForAnOrdinaryQuery() throws IOException {
    for (Path file : ShippedPoliciesTest.shippedPolicies()) {
      Policy p = CliPolicyCompiler.get().compile(file);
      Set<String> found =
          candidates(
              p,
              null,
              fact(Kind.REQUEST, "ExecutePlan", "method", "ExecutePlan"),
              fact(Kind.SQL, "query", "sql", "SELECT upper(name) FROM sales.orders"),
              fact(Kind.FUNCTION_CALL, "scalar", "name", "upper"),
              fact(Kind.TABLE_READ, "sql", "name", "orders"),
              fact(Kind.CONFIG_SET, "", "key", "spark.sql.shuffle.partitions"));
      assertEquals(
          Set.of("statements-allowlist", "functions-allowlist", "config-allowlist"),
          found,
          file.toString());
    }
  }

  private static Set<String> candidates(Policy p, BackendProfile profile, Fact... facts) {
    return candidates(
        p, new EvalInput("ExecutePlan", "alice", List.of(), "", Facts.of(List.of(facts)), profile));
  }

  private static Set<String> candidatesForRpc(Policy p, String rpc) {
    return candidates(p, new EvalInput(rpc, "alice", List.of(), "", Facts.empty(), WITH_EXT));
  }

  private static Set<String> candidates(Policy p, EvalInput in) {
    return Set.copyOf(
        new RuleIndex(p.rules())
            .candidates(in).stream().mapToObj(i -> p.rules().get(i).name()).toList());
  }

  /** Every rule, but while the profile is unknown, a rule that tests it only with a fact of a kind it needs. */
  private static BitSet everyRuleToEvaluate(Policy p, EvalInput in) {
    BitSet out = new BitSet();
    for (int i = 0; i < p.rules().size(); i++) {
      Condition when = p.rules().get(i).when();
      Guard kinds = when == null ? Guard.NONE : when.guard(false);
      if (in.profile() != null
          || when == null
          || !when.needsProfile()
          || kinds.isNone()
          || kinds.anyOf().stream().anyMatch(k -> in.facts().has(k.kind()))) {
        out.set(i);
      }
    }
    return out;
  }

  private static String randomPolicy(Random r) {
    StringBuilder y =
        new StringBuilder("default: ")
            .append(r.nextBoolean() ? "allow" : "deny")
            .append("\nrules:\n");
    int n = 1 + r.nextInt(30);
    for (int i = 0; i < n; i++) {
      // Mostly rules that are only listed, so that a request shows every rule it matches.
      String effect = pick(r, "deny", "allow", "audit", "audit", "audit", "rewrite");
      y.append("  - name: r")
          .append(i)
          .append("\n    description: d\n    effect: ")
          .append(effect)
          .append('\n');
      if (effect.equals("rewrite")) y.append("    rewriter: test_rewriter\n");
      if (r.nextBoolean()) y.append("    mode: shadow\n");
      List<String> match = new ArrayList<>();
      if (r.nextInt(4) == 0)
        match.add(
            "rpc: "
                + pick(
                    r,
                    "ExecutePlan",
                    "[Config, analyzeplan]",
                    "\"*Plan\"",
                    "Exec*",
                    "{regex: \"Exec.*\"}"));
      if (r.nextInt(6) == 0) match.add("groups: [g1]");
      if (!match.isEmpty()) y.append("    match: {").append(String.join(", ", match)).append("}\n");
      if (r.nextInt(20) != 0) y.append("    when: ").append(condition(r, 0)).append('\n');
      y.append("    message: \"m {rule} {name} {subkind}\"\n");
    }
    return y.toString();
  }

  /** A condition in YAML flow style. */
  private static String condition(Random r, int depth) {
    int what = depth >= 3 ? 0 : r.nextInt(10);
    return switch (what) {
      case 6, 7 ->
          "{"
              + pick(r, "any", "all")
              + ": ["
              + condition(r, depth + 1)
              + ", "
              + condition(r, depth + 1)
              + (r.nextBoolean() ? ", " + condition(r, depth + 1) : "")
              + "]}";
      case 8 -> "{not: " + condition(r, depth + 1) + "}";
      case 9 -> "{backend: {extensions_any: [ext.A]}}";
      default -> factCondition(r);
    };
  }

  private static String factCondition(Random r) {
    StringBuilder c = new StringBuilder("{fact: [").append(KINDS[r.nextInt(KINDS.length)]);
    if (r.nextBoolean()) c.append(", ").append(KINDS[r.nextInt(KINDS.length)]);
    c.append(']');
    if (r.nextInt(3) == 0) c.append(", subkind: ").append(matcher(r));
    Map<String, String> attrs = new LinkedHashMap<>();
    if (r.nextInt(3) != 0) attrs.put("name", matcher(r));
    if (r.nextInt(3) == 0) attrs.put("key", matcher(r));
    if (!attrs.isEmpty()) {
      c.append(", attr: {");
      attrs.forEach((k, v) -> c.append(k).append(": ").append(v).append(", "));
      c.setLength(c.length() - 2);
      c.append('}');
    }
    return c.append('}').toString();
  }

  private static String matcher(Random r) {
    return switch (r.nextInt(8)) {
      case 0, 1, 2 -> quoted(glob(r));
      case 3, 4 -> "[" + quoted(glob(r)) + ", " + quoted(glob(r)) + "]";
      case 5 -> "[" + quoted(glob(r)) + ", {regex: \"(?i)" + piece(r) + ".*\"}]";
      case 6 -> "{regex: \"" + piece(r) + ".*\"}";
      default -> quoted(piece(r) + piece(r));
    };
  }

  private static String glob(Random r) {
    return switch (r.nextInt(6)) {
      case 0 -> piece(r) + piece(r);
      case 1 -> piece(r) + "*";
      case 2 -> piece(r) + "*" + piece(r);
      case 3 -> "*" + piece(r);
      case 4 -> piece(r) + "?*";
      default -> piece(r) + piece(r) + "*";
    };
  }

  private static EvalInput randomRequest(Random r) {
    List<Fact> facts = new ArrayList<>();
    int n = r.nextInt(6);
    for (int i = 0; i < n; i++) {
      Map<String, String> attrs = new LinkedHashMap<>();
      if (r.nextInt(4) != 0) attrs.put("name", value(r));
      if (r.nextInt(3) == 0) attrs.put("key", value(r));
      facts.add(new Fact(KINDS[r.nextInt(KINDS.length)], value(r), attrs));
    }
    BackendProfile profile =
        switch (r.nextInt(3)) {
          case 0 -> null;
          case 1 -> WITH_EXT;
          default -> WITHOUT_EXT;
        };
    return new EvalInput(
        pick(r, RPCS),
        "alice",
        r.nextBoolean() ? List.of() : List.of("g1"),
        "",
        Facts.of(facts),
        profile);
  }

  /** Mostly names made of the same pieces as the globs, some of them in other cases. */
  private static String value(Random r) {
    StringBuilder v = new StringBuilder();
    int n = r.nextInt(8) == 0 ? r.nextInt(4) : 1 + r.nextInt(2);
    for (int i = 0; i < n; i++) v.append(piece(r));
    String s = v.toString();
    return switch (r.nextInt(3)) {
      case 0 -> s.toUpperCase(java.util.Locale.ROOT);
      case 1 -> s.toLowerCase(java.util.Locale.ROOT);
      default -> s;
    };
  }

  private static String piece(Random r) {
    return PIECES[r.nextInt(PIECES.length)];
  }

  private static String quoted(String s) {
    return '"' + s + '"';
  }

  @SafeVarargs
  private static <T> T pick(Random r, T... options) {
    return options[r.nextInt(options.length)];
  }
}
