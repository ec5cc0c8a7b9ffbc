package io.sparkgate.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.Sparkgate;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.e2e.SparkConnectServerProcess;
import io.sparkgate.testing.DebianPackages;
import io.sparkgate.tls.DevCertificates;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The PySpark clients against the Spark 4.3.0 Connect server from the {@code pyspark} wheel, through Sparkgate
 * as users meet it (TLS with a private CA, a static token, policies/shared-server.yaml): every scenario works,
 * or is refused by its rule with a message that names the rule. Until the client × Spark version suite
 * (CompatIT) runs these clients, this is their test.
 *
 * <p>Wall time: the first run on a machine installs two virtual environments (about 3 minutes); after that
 * about 1 minute for the server and 1 to 2 minutes per client.
 */
class PySparkCompatSmokeIT {
  private static final String SERVER_VERSION = "4.3.0";
  private static final String PRINCIPAL = "compat-user";

  /** Short result streams (as the e2e servers have), so the large result needs ReattachExecute. */
  private static final Map<String, String> SERVER_CONF =
      Map.of(
          "spark.connect.execute.reattachable.senderMaxStreamDuration", "1s",
          "spark.connect.execute.reattachable.senderMaxStreamSize", "1m",
          "spark.sql.shuffle.partitions", "2");

  private static final Path DOC = Path.of("docs", "clients", "pyspark.md");
  private static final String DOC_HOST = "sparkgate.example.com:15003";
  private static final String DOC_CA = "/path/to/ca.pem";

  private static SparkConnectServerProcess server;
  private static Sparkgate proxy;
  private static Target target;

  @BeforeAll
  static void start() throws Exception {
    DebianPackages.require(
        "python3-venv",
        "python3 -m venv, for the PySpark clients' virtual environments",
        () -> PythonEnvs.unavailable().isEmpty() ? "python3" : null);
    Path dir =
        Files.createDirectories(
            Path.of("target", "compat", "smoke-" + UUID.randomUUID()).toAbsolutePath());

    long started = System.nanoTime();
    server = new WheelSparkServer(SERVER_VERSION).start(dir.resolve("server"), SERVER_CONF);
    System.out.printf("Started %s in %d ms (venv and server)%n", server, millisSince(started));
    assertEquals(SERVER_VERSION, server.sparkVersion());

    DevCertificates.Generated certs =
        DevCertificates.generate(dir.resolve("certs"), DevCertificates.Options.defaults());
    String token = newToken();
    Path config = dir.resolve("sparkgate.yaml");
    Files.writeString(
        config,
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: 0}",
            "tls: {cert_file: certs/server.pem, key_file: certs/server.key}",
            "backend: {address: 'localhost:" + server.port() + "'}",
            "auth:",
            "  static_tokens:",
            "    - {sha256: " + sha256(token) + ", principal: " + PRINCIPAL + "}",
            "policy: {file: '" + Path.of("policies", "shared-server.yaml").toAbsolutePath() + "'}",
            "audit: {file: audit.jsonl}",
            ""));
    proxy = Sparkgate.start(ProxyConfig.load(config));
    target =
        new Target(
            "localhost",
            proxy.port(),
            token,
            certs.caCert(),
            certs.trustStore(),
            DevCertificates.Options.defaults().password(),
            SERVER_VERSION);
  }

  @AfterAll
  static void stop() {
    if (proxy != null) {
      proxy.close();
    }
    if (server != null) {
      server.close();
    }
  }

  @Test
  void fullPackage_sameVersion_everyScenario() throws Exception {
    runAll(PySparkClient.full(SERVER_VERSION));
  }

  @Test
  void thinClient_newestServed_everyScenario() throws Exception {
    runAll(PySparkClient.thin("4.2.0"));
  }

  @Test
  void channelBuilder_trustsThePrivateCa() throws Exception {
    List<Outcome> outcomes =
        timed(
            PySparkClient.full(SERVER_VERSION).withChannelBuilder(),
            List.of(Scenario.VERSION, Scenario.RANGE, Scenario.REFLECT));
    assertScenarios(outcomes);
  }

  /** The two ways docs/clients/pyspark.md tells users to pass the token and trust the CA, run as written. */
  @Test
  void docs_snippetsConnectThroughTheProxy() throws Exception {
    String doc = Files.readString(DOC, StandardCharsets.UTF_8);
    Matcher block = Pattern.compile("```python\n(.*?)```", Pattern.DOTALL).matcher(doc);
    PythonEnvs.Env env = PySparkClient.full(SERVER_VERSION).env();
    int run = 0;
    while (block.find()) {
      String code = block.group(1);
      assertTrue(
          code.contains(DOC_HOST) && code.contains(DOC_CA),
          "a snippet without placeholders:\n" + code);
      Path script = Files.createTempFile(Path.of("target", "compat"), "doc-snippet-", ".py");
      Files.writeString(
          script,
          code.replace(DOC_HOST, target.host() + ":" + target.port())
              .replace(DOC_CA, target.caPem().toAbsolutePath().toString()));
      ProcessBuilder builder =
          new ProcessBuilder(env.python().toString(), script.toAbsolutePath().toString())
              .redirectErrorStream(true);
      builder.environment().remove("GRPC_DEFAULT_SSL_ROOTS_FILE_PATH");
      builder.environment().put("SPARKGATE_TOKEN", target.token());
      Process p = builder.start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(p.waitFor(5, TimeUnit.MINUTES), "the snippet did not finish");
      List<String> lines = out.strip().lines().toList();
      assertEquals(0, p.exitValue(), "snippet " + script + " failed:\n" + out);
      assertEquals("10", lines.get(lines.size() - 1), out);
      run++;
    }
    assertEquals(2, run, "the two ways in " + DOC);
  }

  private static void runAll(PySparkClient client) throws Exception {
    long reattachesBefore = server.reattachCount();
    List<Outcome> outcomes = timed(client, Arrays.asList(Scenario.values()));
    assertScenarios(outcomes);
    assertTrue(
        server.reattachCount() > reattachesBefore,
        "the large result was read without a single ReattachExecute; server log:\n"
            + server.logTail());
  }

  private static List<Outcome> timed(PySparkClient client, List<Scenario> scenarios)
      throws Exception {
    PythonEnvs.Env env = client.env();
    System.out.printf(
        "%s: environment %s (%d MB), %s%n",
        client.name(),
        env.dir(),
        env.sizeBytes() >> 20,
        env.installTime().isZero()
            ? "reused"
            : "installed in " + env.installTime().toSeconds() + " s");
    long started = System.nanoTime();
    List<Outcome> outcomes = client.run(target, scenarios);
    System.out.printf(
        "%s ran %d scenarios in %d ms%n", client.name(), scenarios.size(), millisSince(started));
    for (Outcome o : outcomes) {
      System.out.printf("  %-20s %-11s %s%n", o.scenario().id(), o.outcome(), oneLine(o.detail()));
    }
    assertEquals(scenarios, outcomes.stream().map(Outcome::scenario).toList());
    return outcomes;
  }

  /** Every scenario passed, or was refused by its own rule with a message a user can act on. */
  private static void assertScenarios(List<Outcome> outcomes) {
    List<String> wrong = new ArrayList<>();
    for (Outcome o : outcomes) {
      String rule = o.scenario().refusedBy().orElse(null);
      boolean ok =
          rule == null
              ? o.outcome().equals("pass")
              : o.outcome().equals("refused")
                  && o.detail().contains("rule '" + rule + "'")
                  && !o.detail().contains("INTERNAL_ERROR")
                  && !o.detail().contains("Cannot find main error class");
      if (!ok) {
        wrong.add(o.scenario().id() + " " + o.outcome() + ": " + o.detail());
      }
    }
    assertTrue(
        wrong.isEmpty(),
        "scenarios that did not work or were not refused by their rule:\n"
            + String.join("\n", wrong));
  }

  private static String oneLine(String detail) {
    String line = detail.strip().lines().findFirst().orElse("");
    return line.length() > 200 ? line.substring(0, 200) + "..." : line;
  }

  private static long millisSince(long nanos) {
    return Duration.ofNanos(System.nanoTime() - nanos).toMillis();
  }

  private static String newToken() {
    byte[] bytes = new byte[24];
    new SecureRandom().nextBytes(bytes);
    return "sg-pyspark-" + HexFormat.of().formatHex(bytes);
  }

  private static String sha256(String token) throws Exception {
    return HexFormat.of()
        .formatHex(
            MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
  }
}
