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
 * The grants' cost on one decision: a query joining two tables, decided by a policy without a {@code
 * data_access} section ({@code grants = 0}) and with 10, 1,000 and 10,000 grants (one team namespace each,
 * plus a scratch namespace per principal and a few catalog-wide and path grants that every check also scans).
 * The request's tables are granted, so every access is looked up to the end. Indexed by catalog and
 * namespace, the cost should not grow with the number of grants.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class GrantsBench {
  @Param({"0", "10", "1000", "10000"})
  public int grants;

  private PolicyEngine engine;
  private Facts enriched;
  private List<String> groups;

  /** {@code n} grants (none at all for 0): team namespaces, and a few that every check scans. */
  static String policyYaml(int n) {
    StringBuilder y = new StringBuilder("default: allow\nrules: []\n");
    if (n == 0) return y.toString();
    y.append("data_access:\n  default: deny\n  grants:\n");
    y.append(
            "    - {name: scratch, to: {principals: ['*']}, tables: ['spark_catalog.scratch_{principal}.*'],")
        .append(" privileges: [all]}\n");
    y.append(
        "    - {name: audit-all, to: {groups: [auditors]}, tables: ['*.*.*'], privileges: [select]}\n");
    y.append(
        "    - {name: bucket, to: {groups: [team0]}, paths: ['s3a://team0/*'], privileges: [select]}\n");
    for (int i = 3; i < n; i++) {
      y.append("    - {name: team-")
          .append(i)
          .append(", to: {groups: [team")
          .append(i)
          .append("]}, tables: ['spark_catalog.team")
          .append(i)
          .append(".*', 'iceberg.team")
          .append(i)
          .append(".*'], privileges: [select, modify]}\n");
    }
    return y.toString();
  }

  @Setup
  public void setup() {
    PolicyCompiler compiler =
        new PolicyCompiler(Effect.ALLOW, IcebergTimeTravelPolicyRewriter.all().keySet());
    Policy policy =
        compiler.compile("grants-" + grants + ".yaml", new StringReader(policyYaml(grants)));
    engine = new PolicyEngine(() -> policy, ProfileSource.fixed(BackendProfile.UNKNOWN));
    int team = Math.max(3, grants - 1);
    groups = List.of("analysts", "team" + team);
    enriched =
        inspect(
            "SELECT o.id, c.name FROM team"
                + team
                + ".orders o JOIN scratch_bench.customers c ON o.id = c.id WHERE o.amount > 10");
    Decision d = decide();
    if (d.refused()) throw new IllegalStateException("the benchmark request was refused: " + d);
    if (grants > 0) {
      Decision other = engine.decide("ExecutePlan", "bench", List.of("nobody"), "", enriched);
      if (!other.refused() || !other.rule().equals(Decision.DATA_ACCESS_RULE)) {
        throw new IllegalStateException("the grants are not live: " + other);
      }
    }
  }

  private Facts inspect(String sql) {
    return SecurityFixtures.enrichedSql(engine, sql);
  }

  @Benchmark
  public Decision decide() {
    return engine.decide("ExecutePlan", "bench", groups, "", enriched);
  }
}
