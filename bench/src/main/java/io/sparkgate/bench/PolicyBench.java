package io.sparkgate.bench;

import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Facts;
import io.sparkgate.lakehouse.IcebergTimeTravelPolicyRewriter;
import io.sparkgate.policy.Decision;
import io.sparkgate.policy.Effect;
import io.sparkgate.policy.Policy;
import io.sparkgate.policy.PolicyCompiler;
import io.sparkgate.policy.PolicyEngine;
import io.sparkgate.policy.ProfileSource;
import java.io.StringReader;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Policy evaluation of one inspected ExecutePlan (SQL with a table read, a filter and a function call) against
 * policies of 1, 10, 100 and 1000 rules, none of which matches (half of them are about function calls and table
 * reads, with names the request does not have): the per-request cost should not grow with the number of rules
 * beyond a small constant.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class PolicyBench {
  @Param({"1", "10", "100", "1000"})
  public int rules;

  private PolicyEngine engine;
  private Facts enriched;

  /** {@code n} deny rules over different facts and names, none matching the benchmark request. */
  static String policyYaml(int n) {
    String[] kinds = {"FUNCTION_CALL", "TABLE_READ", "CONFIG_SET", "USER_CODE"};
    StringBuilder y = new StringBuilder("default: allow\nrules:\n");
    for (int i = 0; i < n; i++) {
      String kind = kinds[i % kinds.length];
      y.append("  - name: rule-").append(i).append('\n');
      y.append("    description: benchmark rule ").append(i).append('\n');
      y.append("    effect: deny\n    when:\n      fact: ").append(kind).append('\n');
      if (!kind.equals("USER_CODE")) {
        y.append("      attr:\n        name: [\"nothing_").append(i).append("*\"]\n");
      }
      y.append("    message: \"refused by rule ").append(i).append("\"\n");
    }
    return y.toString();
  }

  @Setup
  public void setup() {
    PolicyCompiler compiler =
        new PolicyCompiler(Effect.ALLOW, IcebergTimeTravelPolicyRewriter.all().keySet());
    Policy policy =
        compiler.compile("bench-" + rules + ".yaml", new StringReader(policyYaml(rules)));
    if (policy.ruleNames().size() != rules) {
      throw new IllegalStateException(
          "compiled " + policy.ruleNames().size() + " rules, wanted " + rules);
    }
    engine = new PolicyEngine(() -> policy, ProfileSource.fixed(BackendProfile.UNKNOWN));
    enriched = inspect("SELECT upper(o.name), o.amount FROM sales.orders o WHERE o.amount > 10");
    Decision d = decide();
    if (!d.rule().equals(Decision.DEFAULT_RULE)) {
      throw new IllegalStateException("a rule matched the benchmark request: " + d);
    }
    // The rules are live: a function they name is refused.
    Decision named =
        engine.decide(
            "ExecutePlan", "bench", List.of("analysts"), "", inspect("SELECT nothing_0(1)"));
    if (!named.refused() || !named.rule().equals("rule-0")) {
      throw new IllegalStateException("rule-0 did not refuse nothing_0(): " + named);
    }
  }

  private Facts inspect(String sql) {
    return SecurityFixtures.enrichedSql(engine, sql);
  }

  @Benchmark
  public Decision decide() {
    return engine.decide("ExecutePlan", "bench", List.of("analysts"), "", enriched);
  }
}
