package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Any text read by Spark's own session parser ({@link SparkOracle}, one child JVM for the whole run) and by
 * Sparkgate's inspector, as a statement (with Spark 4.0's parser settings and each ANSI switch on), as an
 * expression string and as a table name: Spark must never find a function, table, write, path, script
 * transform, data source or setting that Sparkgate's facts lack, unless Sparkgate refuses the text
 * (SparkParserDifferentialTest's rule, {@link ParserDifferential}).
 */
final class SparkParserDifferentialFuzzTest {
  private static final ParserDifferential DIFFERENTIAL = new ParserDifferential();

  @FuzzTest
  void readers_anyText_sparkSeesNothingSparkgateMisses(byte[] input) {
    String text = new String(input, StandardCharsets.UTF_8);
    List<SparkOracle.Request> requests = new ArrayList<>();
    for (SqlParserFlags flags : SparkParserDifferentialTest.VARIANTS)
      requests.add(new SparkOracle.Request(SparkOracle.Mode.PLAN, flags, text));
    requests.add(
        new SparkOracle.Request(SparkOracle.Mode.EXPR, SqlParserFlags.SPARK_4_0_DEFAULTS, text));
    requests.add(
        new SparkOracle.Request(SparkOracle.Mode.IDENT, SqlParserFlags.SPARK_4_0_DEFAULTS, text));
    List<JsonNode> answers = SparkOracle.get().ask(requests);
    for (int i = 0; i < requests.size(); i++) {
      SparkOracle.Request r = requests.get(i);
      ParserDifferential.Result result = DIFFERENTIAL.compare(r, answers.get(i));
      assertNotEquals(
          ParserDifferential.Outcome.DISAGREE,
          result.outcome(),
          () -> "Spark sees more than Sparkgate in " + r + ": " + result.problems());
    }
  }
}
