package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.cli.ExplainCommand;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

final class ExplainCommandTest {
  private String run(String... args) {
    StringWriter out = new StringWriter();
    CommandLine cli = new CommandLine(new ExplainCommand());
    cli.setOut(new PrintWriter(out));
    assertEquals(0, cli.execute(args));
    return out.toString();
  }

  @Test
  void sql_with_catalog_and_database(@TempDir Path dir) throws Exception {
    String out =
        run(
            "--sql",
            "SELECT * FROM trips VERSION AS OF 1",
            "--catalog",
            "iceberg",
            "--database",
            "lake");
    assertTrue(
        out.contains("TIME_TRAVEL[VERSION]") && out.contains("table=iceberg.lake.trips"), out);
    Path plan = dir.resolve("p.json");
    Files.writeString(
        plan,
        "{\"sessionId\":\"s\",\"plan\":{\"root\":{\"read\":{\"dataSource\":{\"format\":\"text\",\"paths\":[\"/etc/hostname\"]}}}}}");
    assertTrue(run("--plan", plan.toString()).contains("PATH[absolute]"));
  }
}
