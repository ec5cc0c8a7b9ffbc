package io.sparkgate.bench;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Collection;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Every JMH micro-benchmark, with every parameter, runs once, briefly, in this JVM. The full run only reaches
 * them after an hour of scenarios, and a benchmark that no longer fits the code it measures (one passed a
 * null the scanner now calls) failed there, not in CI.
 */
class JmhSmokeTest {
  @Test
  void everyBenchmarkRunsWithoutError() throws Exception {
    Collection<RunResult> results =
        new Runner(
                new OptionsBuilder()
                    .include("io\\.sparkgate\\..*Bench\\..*")
                    .forks(0)
                    .warmupIterations(0)
                    .measurementIterations(1)
                    .measurementTime(TimeValue.milliseconds(20))
                    .shouldFailOnError(true)
                    .output("target/jmh-smoke.txt") // the table is not read here; the results are
                    .build())
            .run();
    assertFalse(
        results.isEmpty(),
        "no benchmarks found: is the annotation processor's list on the class path?");
    for (RunResult r : results) {
      double score = r.getPrimaryResult().getScore();
      assertTrue(
          score > 0 && Double.isFinite(score), r.getParams().getBenchmark() + " scored " + score);
    }
  }
}
