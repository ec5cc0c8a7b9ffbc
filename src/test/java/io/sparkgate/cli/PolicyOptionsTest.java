package io.sparkgate.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code --policy}, {@code --pool} and {@code --config} as grants, policy test and policy explain read them:
 * the same choice and, for a mistake, the same line and exit 2 from each.
 */
final class PolicyOptionsTest {
  private static final String HEAD =
      "listen: {address: 127.0.0.1, port: 0, plaintext: true}\n"
          + "backend: {address: '127.0.0.1:1'}\nauth: {anonymous: true}\n";

  private static final String[] GRANTS = {"grants", "what", "--principal", "bob"};
  private static final String[] TEST = {"policy", "test"};
  private static final String[] EXPLAIN = {"policy", "explain", "--sql", "SELECT 1"};

  @TempDir Path dir;
  private Path config;
  private StringWriter err;

  @BeforeEach
  void copyThePolicy() throws IOException {
    for (String f : List.of("team-data.yaml", "team-data_test.yaml", "shared-server.yaml")) {
      Files.copy(Path.of("policies", f), dir.resolve(f));
    }
    config =
        Files.writeString(dir.resolve("sparkgate.yaml"), HEAD + "policy: {file: team-data.yaml}\n");
  }

  private int run(String[] command, String... options) {
    err = new StringWriter();
    CommandLine cli = Main.commandLine();
    cli.setOut(new PrintWriter(new StringWriter())).setErr(new PrintWriter(err));
    return cli.execute(
        Stream.concat(Stream.of(command), Stream.of(options)).toArray(String[]::new));
  }

  /** Each command's exit code and the first line it writes to stderr. */
  private List<String> refusals(String... options) {
    return Stream.of(GRANTS, TEST, EXPLAIN)
        .map(c -> run(c, options) + " " + err.toString().lines().findFirst().orElse(""))
        .toList();
  }

  @Test
  void anUnknownPool_theSameLineFromEachCommand() {
    assertEquals(
        List.of(
            "2 sparkgate grants: --pool x: " + config + " has pools [default]",
            "2 --pool x: " + config + " has pools [default]",
            "2 --pool x: " + config + " has pools [default]"),
        refusals("--config", config.toString(), "--pool", "x"));
  }

  @Test
  void anUnreadableConfiguration_oneLine_notAStackTrace() {
    Path missing = dir.resolve("nowhere.yaml");
    String line = missing + ": no such file (pass --config with the path to sparkgate.yaml)";
    assertEquals(
        List.of("2 sparkgate grants: " + line, "2 " + line, "2 " + line),
        refusals("--config", missing.toString(), "--pool", "default"));
  }

  @Test
  void aPoolWithoutAPolicy_isRefused_withoutPool_grantsNameTheDefaultPool() throws IOException {
    Files.writeString(config, HEAD);
    String line = "--pool default has no policy in " + config;
    assertEquals(
        List.of("2 sparkgate grants: " + line, "2 " + line, "2 " + line),
        refusals("--config", config.toString(), "--pool", "default"));
    assertEquals(2, run(GRANTS, "--config", config.toString()));
    assertEquals(
        "sparkgate grants: pool default (no --pool) has no policy in " + config,
        err.toString().strip());
  }

  @Test
  void policy_winsOverThePool_andTheConfigurationIsNotRead() {
    String[] options = {
      "--policy", dir.resolve("team-data.yaml").toString(),
      "--config", dir.resolve("nowhere.yaml").toString()
    };
    assertEquals(0, run(GRANTS, options), err::toString);
    assertEquals(0, run(EXPLAIN, options), err::toString);
  }

  @Test
  void withoutPolicyOrPool_grantsReadTheDefaultPoolsPolicy_testsRunBesideThePoolsPolicy() {
    assertEquals(0, run(GRANTS, "--config", config.toString()), err::toString);
    assertEquals(0, run(TEST, "--pool", "default", "--config", config.toString()), err::toString);
    assertTrue(err.toString().isEmpty(), err::toString);
  }
}
