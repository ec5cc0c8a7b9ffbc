package io.sparkgate.bench;

import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionView;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Request inspection of one ExecutePlan: balanced UNION ALL trees of 10, 1,000 and 10,000 relations (wide,
 * not deep: a 10,000-deep plan is refused by the depth bound before any walking) and SQL of 1 KB and 100 KB.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class InspectBench {
  @Param({"plan-10", "plan-1000", "plan-10000", "sql-1KB", "sql-100KB"})
  public String shape;

  private final Inspector inspector = new Inspector();
  private SessionView session;
  private byte[] request;

  @Setup
  public void setup() {
    request = switch (shape) {
      case "plan-10" -> SecurityFixtures.request(SecurityFixtures.unionTree(11));
      case "plan-1000" -> SecurityFixtures.request(SecurityFixtures.unionTree(1001));
      case "plan-10000" -> SecurityFixtures.request(SecurityFixtures.unionTree(10001));
      case "sql-1KB" -> SecurityFixtures.request(SecurityFixtures.sql(1024));
      case "sql-100KB" -> SecurityFixtures.request(SecurityFixtures.sql(100 * 1024));
      default -> throw new IllegalArgumentException(shape);
    };
    session = BackendProfile.UNKNOWN.freshSession();
    Facts facts = inspector.inspect("ExecutePlan", request, session);
    if (facts.has(Fact.Kind.UNCLASSIFIED)) {
      // A bound hit would measure the refusal, not the inspection.
      throw new IllegalStateException(shape + " was not fully inspected: " + facts.ofKind(Fact.Kind.UNCLASSIFIED));
    }
  }

  @Benchmark
  public Facts inspect() {
    return inspector.inspect("ExecutePlan", request, session);
  }
}
