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

  private int run(String... args) {
    err = new StringWriter();
    CommandLine cli = Main.commandLine();
    cli.setOut(new PrintWriter(new StringWriter())).setErr(new PrintWriter(err));
    return cli.execute(args);
  }

  /** The first line each command writes to stderr, after its exit code. */
  private List<String> refusals(String... poolArgs) {
    List<String[]> commands =
        List.of(
            new String[] {"grants", "what", "--principal", "bob"},
            new String[] {"policy", "test"},
            new String[] {"policy", "explain", "--sql", "SELECT 1"});
    return commands.stream()
        .map(
            c -> {
              int code =
                  run(Stream.concat(Stream.of(c), Stream.of(poolArgs)).toArray(String[]::new));
              return code + " " + err.toString().lines().findFirst().orElse("");
            })
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
    assertEquals(2, run("grants", "what", "--principal", "bob", "--config", config.toString()));
    assertEquals(
        "sparkgate grants: pool default (no --pool) has no policy in " + config,
        err.toString().strip());
  }

  @Test
  void policy_winsOverThePool_andTheConfigurationIsNotRead() {
    Path missing = dir.resolve("nowhere.yaml");
    assertEquals(
        0,
        run(
            "grants",
            "what",
            "--principal",
            "bob",
            "--policy",
            dir.resolve("team-data.yaml").toString(),
            "--config",
            missing.toString()),
        err::toString);
    assertEquals(
        0,
        run(
            "policy",
            "explain",
            "--sql",
            "SELECT 1",
            "--policy",
            dir.resolve("team-data.yaml").toString(),
            "--config",
            missing.toString()),
        err::toString);
  }

  @Test
  void withoutPolicyOrPool_grantsReadTheDefaultPoolsPolicy_testsRunBesideThePoolsPolicy() {
    assertEquals(
        0,
        run("grants", "what", "--principal", "bob", "--config", config.toString()),
        err::toString);
    assertEquals(
        0,
        run("policy", "test", "--pool", "default", "--config", config.toString()),
        err::toString);
    assertTrue(err.toString().isEmpty(), err::toString);
  }
}
