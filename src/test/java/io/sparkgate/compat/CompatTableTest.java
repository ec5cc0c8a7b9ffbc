package io.sparkgate.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.compat.CompatResults.PairResult;
import io.sparkgate.compat.CompatResults.ScenarioResult;
import io.sparkgate.compat.CompatResults.ServerRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

final class CompatTableTest {

  private static ScenarioResult ok(String s) {
    return new ScenarioResult(s, "pass", "", "pass", "", null, null, null);
  }

  private static ScenarioResult failed(String s, String cause) {
    return new ScenarioResult(s, "fail", "boom", "fail", "fail: boom", "fail", "boom", cause);
  }

  private static final CompatResults RESULTS =
      new CompatResults(
          "2026-12-06T08:00:00Z",
          List.of(
              new ServerRun("3.5.7", "ran", "", 20_000, 40_000),
              new ServerRun("4.0.0", "ran", "", 15_000, 90_000),
              new ServerRun("4.3.0", "unavailable", "no wheel", 0, 0)),
          List.of(
              new PairResult(
                  "JVM client 4.0.0", "3.5.7", "not-supported-by-spark", "", 1, 0, List.of()),
              new PairResult(
                  "JVM client 4.0.0", "4.0.0", "supported", "", 1, 3, List.of(ok("range"))),
              new PairResult(
                  "JVM client 4.1.1", "3.5.7", "not-supported-by-spark", "", 1, 0, List.of()),
              new PairResult(
                  "JVM client 4.1.1",
                  "4.0.0",
                  "supported",
                  "",
                  1,
                  3,
                  List.of(ok("range"), failed("create_dataframe", CompatResults.CAUSE_SPARK_SKEW))),
              new PairResult(
                  "Go client",
                  "4.0.0",
                  "supported",
                  "",
                  1,
                  3,
                  List.of(failed("large_result", CompatResults.CAUSE_SPARKGATE)))));

  @Test
  void markdown_onePerClientRow_onePerServerColumn() {
    String md = CompatTable.markdown(RESULTS);
    assertTrue(md.contains("| client \\ Spark server | 3.5.7 | 4.0.0 | 4.3.0 |"), md);
    assertTrue(
        md.contains(
            "| JVM client 4.0.0 | not supported by Spark itself | works | not run (no wheel) |"),
        md);
    assertTrue(
        md.contains(
            "| JVM client 4.1.1 | not supported by Spark itself | works, except create_dataframe"
                + " (Spark's own skew) |"),
        md);
    assertTrue(
        md.contains("| Go client | not run | **fails through Sparkgate**: large_result |"), md);
  }

  @Test
  void results_roundTripThroughJson(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("results.json");
    RESULTS.write(file);
    assertEquals(RESULTS, CompatResults.read(file));
  }

  @Test
  void rewrite_replacesOnlyBetweenTheMarkers(@TempDir Path dir) throws Exception {
    Path readme = dir.resolve("README.md");
    Files.writeString(
        readme, "intro\n" + CompatTable.BEGIN + "\nold\n" + CompatTable.END + "\nrest\n");
    CompatTable.rewrite(readme, "| new |\n");
    assertEquals(
        "intro\n" + CompatTable.BEGIN + "\n| new |\n" + CompatTable.END + "\nrest\n",
        Files.readString(readme));
    Path bare = Files.writeString(dir.resolve("BARE.md"), "no markers\n");
    assertThrows(IllegalStateException.class, () -> CompatTable.rewrite(bare, "x"));
  }
}
