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

/** {@code sparkgate grants who|what} over the shipped team-data policy: one line per grant, exit 0 or 2. */
final class GrantsCommandTest {
  private static final String TEAM_DATA = "policies/team-data.yaml";
  @TempDir Path dir;
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    CommandLine cli = Main.commandLine();
    cli.setOut(new PrintWriter(out)).setErr(new PrintWriter(err));
    return cli.execute(args);
  }

  @Test
  void who_oneLinePerCoveringGrant() {
    assertEquals(
        0, run("grants", "who", "--table", "spark_catalog.shared.rates", "--policy", TEAM_DATA));
    assertEquals(
        """
        spark_catalog.shared.rates:
          analysts-read-shared: select to groups [analysts, finance, marketing] (by spark_catalog.shared.*)
          platform-writes-shared: select, modify, create, alter, drop, maintain to groups [platform] (by spark_catalog.shared.*)
        """,
        out.toString());
  }

  @Test
  void who_namesThePrincipalOfAPlaceholder_andPathsToo() {
    assertEquals(
        0,
        run(
            "grants",
            "who",
            "--table",
            "spark_catalog.scratch_alice.t",
            "--path",
            "s3a://finance-data/x.csv",
            "--policy",
            TEAM_DATA));
    String[] lines = out.toString().split("\n");
    assertEquals(
        "  own-scratch: select, modify, create, alter, drop, maintain to principals [*],"
            + " for principal alice only (by spark_catalog.scratch_{principal}.*)",
        lines[1]);
    assertEquals(
        "  finance-bucket: select, modify to groups [finance] (by s3a://finance-data/*)", lines[3]);
  }

  @Test
  void who_nothingCovers_saysWhatTheDefaultDoes() {
    assertEquals(0, run("grants", "who", "--table", "iceberg.hr.people", "--policy", TEAM_DATA));
    assertEquals(
        "iceberg.hr.people: no grant covers it; default deny: no one may reach it\n",
        out.toString());
  }

  @Test
  void what_listsTheGrantsHeld() {
    assertEquals(
        0,
        run(
            "grants",
            "what",
            "--principal",
            "alice",
            "--groups",
            "analysts,finance",
            "--policy",
            TEAM_DATA));
    assertEquals(
        """
        alice (groups analysts, finance) holds:
          finance-team: select, modify, create, alter, drop, maintain on spark_catalog.finance.*, iceberg.finance.*
          analysts-read-shared: select on spark_catalog.shared.*
          own-scratch: select, modify, create, alter, drop, maintain on spark_catalog.scratch_alice.*
          finance-bucket: select, modify on s3a://finance-data/*
        """,
        out.toString());
  }

  @Test
  void aMalformedTable_exit2_oneLine() {
    assertEquals(2, run("grants", "who", "--table", "finance.payroll", "--policy", TEAM_DATA));
    assertEquals(
        "sparkgate grants: 'finance.payroll' is not catalog.namespace.name"
            + " (e.g. spark_catalog.finance.payroll)",
        err.toString().strip());
  }

  @Test
  void aPolicyWithoutDataAccess_exit2_oneLine() {
    String policy = "policies/shared-server.yaml";
    assertEquals(2, run("grants", "what", "--principal", "alice", "--policy", policy));
    assertEquals(
        "sparkgate grants: " + Path.of(policy) + " has no data_access section: no grants to review",
        err.toString().strip());
  }

  @Test
  void aPoolOfTheConfiguration_usesItsPolicy() throws IOException {
    Files.copy(Path.of(TEAM_DATA), dir.resolve("team-data.yaml"));
    Files.copy(Path.of("policies/shared-server.yaml"), dir.resolve("shared-server.yaml"));
    Path config =
        Files.writeString(
            dir.resolve("sparkgate.yaml"),
            "listen: {address: 127.0.0.1, port: 0, plaintext: true}\n"
                + "backend: {address: '127.0.0.1:1'}\nauth: {anonymous: true}\n"
                + "policy: {file: team-data.yaml}\n");
    assertEquals(
        0,
        run(
            "grants",
            "what",
            "--principal",
            "bob",
            "--config",
            config.toString(),
            "--pool",
            "default"));
    assertEquals(
        "bob holds:\n  own-scratch: select, modify, create, alter, drop, maintain"
            + " on spark_catalog.scratch_bob.*\n",
        out.toString());
    assertEquals(
        2,
        run("grants", "what", "--principal", "bob", "--config", config.toString(), "--pool", "x"));
    assertEquals(
        "sparkgate grants: --pool x: " + config + " has pools [default]", err.toString().strip());
  }
}
