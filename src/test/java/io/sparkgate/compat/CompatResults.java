package io.sparkgate.compat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What one run of the suite found, written to {@code target/compat/results.json} and turned into the README's
 * table by {@link CompatTable}.
 */
record CompatResults(String generatedAt, List<ServerRun> servers, List<PairResult> pairs) {

  static final Path FILE = Path.of("target", "compat", "results.json");
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  /** A server version: {@code ran} (with its start-up and total time), or {@code unavailable} and why. */
  record ServerRun(
      String version, String status, String detail, long startMillis, long totalMillis) {}

  /**
   * One client against one server.
   *
   * @param support {@code supported} (run through the proxy), {@code not-supported-by-spark} (a direct probe
   *     only), {@code client-unavailable}
   * @param reattaches ReattachExecute calls the server saw during the pair's run
   */
  record PairResult(
      String client,
      String server,
      String support,
      String note,
      long millis,
      long reattaches,
      List<ScenarioResult> scenarios) {

    boolean sparkgateFailed() {
      return scenarios.stream().anyMatch(s -> CAUSE_SPARKGATE.equals(s.cause()));
    }
  }

  static final String CAUSE_SPARKGATE = "sparkgate";
  static final String CAUSE_SPARK_SKEW = "spark-skew";

  /**
   * @param verdict {@code pass}, {@code fail} or {@code unsupported} ({@link Verdict})
   * @param direct for a failure, the outcome of the same scenario straight to the server (no proxy)
   * @param cause for a failure: {@value #CAUSE_SPARK_SKEW} (fails directly too) or {@value #CAUSE_SPARKGATE}
   */
  record ScenarioResult(
      String scenario,
      String outcome,
      String detail,
      String verdict,
      String reason,
      String direct,
      String directDetail,
      String cause) {}

  void write(Path file) throws IOException {
    Files.createDirectories(file.toAbsolutePath().getParent());
    JSON.writeValue(file.toFile(), this);
  }

  static CompatResults read(Path file) throws IOException {
    return JSON.readValue(file.toFile(), CompatResults.class);
  }
}
