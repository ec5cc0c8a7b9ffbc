package io.sparkgate.bench;

import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionView;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
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
 * Request inspection of one ExecutePlan: balanced UNION ALL trees of 10, 1,000 and 10,000 relations (wide,
 * not deep: a 10,000-deep plan is refused by the depth bound before any walking) and SQL of 1 KB and 100 KB.
 * "sql-1KB" sends a different text every time (cycling through {@link #DISTINCT} of them, far more than the
 * inspector's SQL caches hold), so it measures parsing and walking; "sql-1KB-repeated" sends one text, so it
 * measures the caches. 100 KB is above what they hold at all.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class InspectBench {
  @Param({"plan-10", "plan-1000", "plan-10000", "sql-1KB", "sql-1KB-repeated", "sql-100KB"})
  public String shape;

  static final int DISTINCT = 16_384;

  private final Inspector inspector = new Inspector();
  private SessionView session;
  private byte[][] requests;
  private int next;

  @Setup
  public void setup() {
    requests =
        switch (shape) {
          case "plan-10" -> one(SecurityFixtures.unionTree(11));
          case "plan-1000" -> one(SecurityFixtures.unionTree(1001));
          case "plan-10000" -> one(SecurityFixtures.unionTree(10001));
          case "sql-1KB" -> distinct(SecurityFixtures.sql(1024).getSql().getQuery());
          case "sql-1KB-repeated" -> one(SecurityFixtures.sql(1024));
          case "sql-100KB" -> one(SecurityFixtures.sql(100 * 1024));
          default -> throw new IllegalArgumentException(shape);
        };
    session = BackendProfile.UNKNOWN.freshSession();
    Facts facts = inspector.inspect("ExecutePlan", requests[0], session);
    if (facts.has(Fact.Kind.UNCLASSIFIED)) {
      // A bound hit would measure the refusal, not the inspection.
      throw new IllegalStateException(
          shape + " was not fully inspected: " + facts.ofKind(Fact.Kind.UNCLASSIFIED));
    }
  }

  private static byte[][] one(Relation root) {
    return new byte[][] {SecurityFixtures.request(root)};
  }

  /** The same statement with a different literal each time. */
  private static byte[][] distinct(String sql) {
    byte[][] out = new byte[DISTINCT][];
    for (int i = 0; i < DISTINCT; i++) {
      String query = sql + " AND t.id <> " + i;
      out[i] =
          SecurityFixtures.request(
              Relation.newBuilder().setSql(SQL.newBuilder().setQuery(query)).build());
    }
    return out;
  }

  @Benchmark
  public Facts inspect() {
    byte[] request = requests[next];
    next = next + 1 == requests.length ? 0 : next + 1;
    return inspector.inspect("ExecutePlan", request, session);
  }
}
