package io.sparkgate.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.e2e.SparkConnectServerProcess;
import io.sparkgate.e2e.SparkServerExtension;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * How docs/clients/pyspark.md tells users to pass the token and trust a private CA, checked through Sparkgate
 * (TLS with a private CA, a static token, policies/shared-server.yaml) in front of the e2e tests' shared
 * Spark 4.0 server: the ChannelBuilder way, and both snippets of the page run as written. Every scenario with
 * every PySpark client and Spark version is CompatIT's.
 */
@ExtendWith(SparkServerExtension.class)
class PySparkDocsIT {
  /** pyspark[connect] of the shared server's minor version. */
  private static final String CLIENT_VERSION = "4.0.5";

  private static final Path DOC = Path.of("docs", "clients", "pyspark.md");
  private static final String DOC_HOST = "sparkgate.example.com:15003";
  private static final String DOC_CA = "/path/to/ca.pem";

  private static CompatProxy proxy;
  private static Target target;

  @BeforeAll
  static void start(SparkConnectServerProcess server) throws Exception {
    PySparkClient.requireVenv();
    Path dir =
        Files.createDirectories(
            Path.of("target", "compat", "docs-" + UUID.randomUUID()).toAbsolutePath());
    proxy = CompatProxy.start(dir, server.port(), server.sparkVersion());
    target = proxy.target();
  }

  @AfterAll
  static void stop() {
    if (proxy != null) {
      proxy.close();
    }
  }

  @Test
  void channelBuilder_trustsThePrivateCa() throws Exception {
    List<Outcome> outcomes =
        PySparkClient.full(CLIENT_VERSION)
            .withChannelBuilder()
            .run(target, List.of(Scenario.VERSION, Scenario.RANGE, Scenario.REFLECT));
    Verdict verdict = Verdict.forPolicy(CompatProxy.POLICY);
    for (Outcome o : outcomes) {
      assertFalse(
          verdict.judge(o).failed(), o.scenario().id() + " " + o.outcome() + ": " + o.detail());
    }
    assertEquals(3, outcomes.size());
  }

  /** The two ways docs/clients/pyspark.md tells users to pass the token and trust the CA, run as written. */
  @Test
  void docs_snippetsConnectThroughTheProxy() throws Exception {
    String doc = Files.readString(DOC, StandardCharsets.UTF_8);
    Matcher block = Pattern.compile("```python\n(.*?)```", Pattern.DOTALL).matcher(doc);
    PythonEnvs.Env env = PySparkClient.full(CLIENT_VERSION).env();
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
}
