package io.sparkgate.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** A configuration or policy that cannot be used stops {@code serve} with one line naming file, line and key. */
final class ServeCommandTest {
  @TempDir Path dir;
  private final StringWriter err = new StringWriter();

  private int serve(String config) throws IOException {
    Path file = Files.writeString(dir.resolve("sparkgate.yaml"), config);
    return new CommandLine(new ServeCommand())
        .setErr(new PrintWriter(err))
        .execute("--config", file.toString());
  }

  @Test
  void aBadConfiguration_oneLine_exit2() throws IOException {
    assertEquals(2, serve("listen:\n  port: 1\n  port: 2\n"));
    assertEquals(
        "sparkgate: "
            + dir.resolve("sparkgate.yaml")
            + ":3: listen.port: duplicate key (first at line 2)",
        err.toString().strip());
  }

  @Test
  void aPolicyThatDoesNotCompile_oneLine_exit2_notAStackTrace() throws IOException {
    Path policy =
        Files.writeString(
            dir.resolve("p.yaml"), "rules:\n  - name: a\n    description: d\n    effect: alow\n");
    int code =
        serve(
            "listen: {address: 127.0.0.1, port: 0, plaintext: true}\nbackend: {address: '127.0.0.1:1'}\nauth: {anonymous: true}\n"
                + "policy: {file: p.yaml}\n");
    assertEquals(2, code);
    assertEquals(
        "sparkgate: "
            + policy
            + ":4: rule 'a': effect: must be deny, allow, audit or rewrite, got 'alow'",
        err.toString().strip());
  }
}
