package io.sparkgate.compat;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgate.e2e.SparkConnectServerProcess;
import io.sparkgate.e2e.SparkServerExtension;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.function.Executable;

/**
 * The string-reading attacks only PySpark's DataFrame API sends (a cast's type string, createDataFrame's
 * schema string, expression strings in select, filter, agg and orderBy), tried with real PySpark against the
 * e2e tests' shared Spark 4.0 server: directly each works (a Java call answers, or the server's environment,
 * properties or settings come back in a value, a field comment or an error message); through Sparkgate (TLS,
 * a token, policies/shared-server.yaml) each is refused under no-variable-substitution, with nothing of the
 * server's in the error.
 */
@ExtendWith(SparkServerExtension.class)
class PySparkBypassIT {
  private static final String CLIENT_VERSION = "4.0.5";
  private static final Path PROGRAM =
      Path.of("src", "test", "python", "bypass", "pyspark_attacks.py");

  private static CompatProxy proxy;
  private static SparkConnectServerProcess server;

  @BeforeAll
  static void start(SparkConnectServerProcess s) throws Exception {
    PySparkClient.requireVenv();
    server = s;
    Path dir =
        Files.createDirectories(
            Path.of("target", "compat", "bypass-" + UUID.randomUUID()).toAbsolutePath());
    proxy = CompatProxy.start(dir, server.port(), server.sparkVersion());
  }

  @AfterAll
  static void stop() {
    if (proxy != null) proxy.close();
  }

  @Test
  void eachAttackWorksDirectlyAndIsRefusedThroughSparkgate() throws Exception {
    Map<String, Map<String, JsonNode>> runs = run();
    assertEquals(7, runs.size(), "attacks run: " + runs.keySet());
    String home = System.getProperty("user.home");
    String user = System.getProperty("user.name");
    List<Executable> checks = new ArrayList<>();
    runs.forEach(
        (attack, byTarget) -> {
          JsonNode direct = byTarget.get("direct");
          JsonNode proxied = byTarget.get("proxy");
          checks.add(
              () -> {
                // Directly, the server's own values come back, in the answer or in its error.
                String shown =
                    direct.path(direct.path("ok").asBoolean() ? "value" : "error").asText();
                assertTrue(
                    shown.contains(home) || shown.contains(user) || shown.equals("1"),
                    attack + ": did not work directly: " + direct);
                if (shown.equals("1")) assertTrue(direct.path("ok").asBoolean(), attack);
              });
          checks.add(
              () -> {
                assertFalse(proxied.path("ok").asBoolean(), attack + ": ran through Sparkgate");
                String error = proxied.path("error").asText();
                assertTrue(error.contains("SPARKGATE_POLICY_DENIED"), attack + ": " + error);
                assertTrue(
                    error.contains("rule 'no-variable-substitution'"), attack + ": " + error);
                assertFalse(error.contains(home), attack + ": the server's home in: " + error);
              });
        });
    assertAll(checks);
  }

  /** attack -> target -> its JSON line. */
  private static Map<String, Map<String, JsonNode>> run() throws Exception {
    PythonEnvs.Env env = PySparkClient.full(CLIENT_VERSION).env();
    Target target = proxy.target();
    ProcessBuilder builder =
        new ProcessBuilder(
                env.python().toString(),
                PROGRAM.toAbsolutePath().toString(),
                "--direct",
                "127.0.0.1:" + server.port(),
                "--proxy",
                target.host() + ":" + target.port(),
                "--ca",
                target.caPem().toAbsolutePath().toString())
            .redirectError(ProcessBuilder.Redirect.INHERIT);
    PySparkClient.clearInherited(builder.environment());
    builder.environment().put("SPARKGATE_TOKEN", target.token());
    Process p = builder.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(5, TimeUnit.MINUTES), "the PySpark program did not finish");
    assertEquals(0, p.exitValue(), out);
    ObjectMapper json = new ObjectMapper();
    Map<String, Map<String, JsonNode>> runs = new LinkedHashMap<>();
    for (String line : out.strip().lines().toList()) {
      if (!line.startsWith("{")) continue;
      JsonNode n = json.readTree(line);
      runs.computeIfAbsent(n.get("attack").asText(), k -> new LinkedHashMap<>())
          .put(n.get("target").asText(), n);
    }
    return runs;
  }
}
