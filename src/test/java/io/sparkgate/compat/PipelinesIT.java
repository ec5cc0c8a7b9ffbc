package io.sparkgate.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgate.e2e.SparkConnectServerProcess;
import io.sparkgate.testing.AuditLines;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.DebianPackages;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Spark Declarative Pipelines and saved ML models through Sparkgate with real peers: the {@code
 * spark-pipelines} CLI and PySpark of {@code pyspark[connect,pipelines]} 4.1.4, a Spark 4.1.4 Connect server
 * from the same wheel's jars, and Sparkgate with TLS, a private CA and the shipped
 * policies/shared-server.yaml, one token for a member of {@code sparkgate-pipeline-authors} and one for an
 * ordinary user.
 *
 * <p>The shipped {@code paths-allowlist} refuses the server's local file system, and this server has no
 * object store. So the server mounts a directory of this test under {@code viewfs://sparkgate/} (Hadoop's
 * view file system, a scheme the allowlist names): the pipeline's storage and the saved model live there,
 * under a path the shipped policy allows, with no override of the policy.
 *
 * <p>The pipeline (src/test/python/compat/pipeline) is two materialized views defined in Python: the flow
 * functions run in the CLI, which sends their plans, so no Python runs on the server. A pipeline of SQL files
 * is not tried: docs/policies.md says the shipped policy refuses it until the inspector's grammar reads the
 * pipeline dialect ({@code CREATE MATERIALIZED VIEW}, {@code CREATE FLOW}).
 */
class PipelinesIT {
  private static final String VERSION = "4.1.4";
  private static final String AUTHOR = "pipeline-author";
  private static final String USER = "ordinary-user";
  private static final String MOUNT = "viewfs://sparkgate";
  private static final Path PROJECT = Path.of("src", "test", "python", "compat", "pipeline");
  private static final Path CLIENT =
      Path.of("src", "test", "python", "compat", "pipelines_client.py");

  /** A CLI run costs two JVM starts and a pipeline run; a loaded 2-core machine takes minutes. */
  private static final Duration TIMEOUT = Duration.ofMinutes(6);

  private static final ObjectMapper JSON = new ObjectMapper();

  private static Path dir;
  private static SparkConnectServerProcess server;
  private static CompatProxy proxy;
  private static PythonEnvs.Env env;

  @BeforeAll
  static void start() throws Exception {
    DebianPackages.require(
        "python3-venv",
        "python3 -m venv, for PySpark's virtual environment",
        () -> PythonEnvs.unavailable().isEmpty() ? "python3" : null);
    dir =
        Files.createDirectories(
            Path.of("target", "compat", "pipelines-" + UUID.randomUUID()).toAbsolutePath());
    // The CLI imports pyyaml, which only the "pipelines" extra brings.
    env =
        PythonEnvs.get(
            "pyspark-pipelines-" + VERSION, List.of("pyspark[connect,pipelines]==" + VERSION));
    Path mounted = Files.createDirectories(dir.resolve("viewfs"));
    Map<String, String> conf = new LinkedHashMap<>(CompatServers.SHARED_CONF);
    conf.put("spark.hadoop.fs.viewfs.mounttable.sparkgate.link./data", mounted.toUri().toString());
    server = new WheelSparkServer(VERSION).start(dir.resolve("server"), conf);
    proxy =
        CompatProxy.start(
            dir.resolve("proxy"),
            server.port(),
            server.sparkVersion(),
            List.of(
                new CompatProxy.User(AUTHOR, List.of("sparkgate-pipeline-authors")),
                new CompatProxy.User(USER, List.of())));
  }

  @AfterAll
  static void stop() {
    if (proxy != null) {
      proxy.close();
    }
    if (server != null) {
      server.stop();
    }
  }

  @Test
  void author_runsThePipeline_andReadsItsTablesBack() throws Exception {
    Run run = pipeline(AUTHOR, "author", MOUNT + "/data/author-storage", Map.of());
    assertEquals(0, run.exit(), run.toString());
    assertTrue(run.output().contains("Run is COMPLETED"), run.toString());

    assertEquals(
        "[[0,0],[1,1],[2,4],[3,9],[4,16]]", client(AUTHOR, "read", "sparkgate_squares").toString());
    assertEquals(
        "[[0,0],[2,4],[4,16]]", client(AUTHOR, "read", "sparkgate_even_squares").toString());
    // The flow definitions went through with the CLI's PipelineAnalysisContext forwarded (the
    // UserContext extension allowlist), and were allowed.
    Await.until(
        "an allowed pipeline command with its analysis context in the audit log",
        () ->
            AuditLines.complete(proxy.auditLog()).stream()
                .anyMatch(
                    l ->
                        l.contains("\"principal\":\"" + AUTHOR + "\"")
                            && l.contains("\"decision\":\"allow\"")
                            && l.contains("pipeline_command")
                            && l.contains("extension:usercontext")));
  }

  @Test
  void ordinaryUser_isRefusedWithTheRuleAndTheRemedy() throws Exception {
    Run run = pipeline(USER, "user", MOUNT + "/data/user-storage", Map.of());
    assertNotEquals(0, run.exit(), run.toString());
    assertRefused(run.output(), "pipelines-for-pipeline-authors", "sparkgate-pipeline-authors");
    assertFalse(run.output().contains("Run is COMPLETED"), run.toString());
    // The audit writer flushes in batches: poll.
    Await.until(
        "the refusal in the audit log",
        () ->
            AuditLines.complete(proxy.auditLog()).stream()
                .anyMatch(l -> l.contains(USER) && l.contains("pipelines-for-pipeline-authors")));
  }

  @Test
  void author_storageOnTheServersFileSystem_isRefused() throws Exception {
    Path storage = Files.createDirectories(dir.resolve("local-storage"));
    Run run = pipeline(AUTHOR, "local-storage", storage.toUri().toString(), Map.of());
    assertNotEquals(0, run.exit(), run.toString());
    assertRefused(run.output(), "paths-allowlist", "object-store paths");
    assertFalse(run.output().contains("is QUEUED"), "no flow ran: " + run);
    try (Stream<Path> written = Files.list(storage)) {
      assertEquals(0, written.count(), "nothing was written to the refused storage");
    }
  }

  @Test
  void author_settingOffTheConfigAllowlist_isRefused() throws Exception {
    Run run =
        pipeline(
            AUTHOR,
            "sql-conf",
            MOUNT + "/data/sql-conf-storage",
            Map.of("spark.sql.catalog.sparkgate_test", "org.example.NoSuchCatalog"));
    assertNotEquals(0, run.exit(), run.toString());
    assertRefused(run.output(), "config-allowlist", "ask the platform team");
    assertTrue(
        run.output().contains("Setting spark.sql.catalog.sparkgate_test is not allowed"),
        "the refused key is named: " + run);
  }

  @Test
  void loadingASavedModel_isRefusedForAnOrdinaryUser() throws Exception {
    String model = MOUNT + "/data/model";
    // Saved and loaded straight at the server: the model is real, and Spark itself loads it.
    assertEquals("\"" + model + "\"", client(null, "save-model", model).toString());
    assertEquals("[\"Binarizer\"]", client(null, "load-model", model).toString());

    Run run = clientRun(USER, "load-model", model);
    JsonNode result = lastJson(run);
    assertEquals("error", result.path("outcome").asText(), run.toString());
    assertRefused(
        result.path("detail").asText(), "no-ml-model-load", "Load and score models on a dedicated");
  }

  // ---- running the clients
  // -------------------------------------------------------------------------------

  record Run(int exit, String output, Path log) {
    @Override
    public String toString() {
      List<String> lines = output.lines().filter(l -> !l.contains(" INFO ")).toList();
      return "exit "
          + exit
          + ", log "
          + log
          + ":\n"
          + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }
  }

  /**
   * {@code spark-pipelines run} as {@code principal}, through the proxy, on a copy of the pipeline project
   * with a spec of this storage and configuration. The token and the CA go in the environment, never on the
   * command line.
   */
  private static Run pipeline(
      String principal, String name, String storage, Map<String, String> configuration)
      throws Exception {
    Path project = dir.resolve("project-" + name);
    copy(PROJECT, project);
    List<String> spec = new ArrayList<>();
    spec.add("name: sparkgate-" + name);
    spec.add("storage: " + storage);
    if (!configuration.isEmpty()) {
      spec.add("configuration:");
      configuration.forEach((k, v) -> spec.add("  " + k + ": " + v));
    }
    spec.addAll(List.of("libraries:", "  - glob:", "      include: transformations/**", ""));
    Files.writeString(project.resolve("spark-pipeline.yml"), String.join("\n", spec));

    Target target = proxy.target(principal);
    Map<String, String> environment = new LinkedHashMap<>();
    environment.put("SPARK_CONNECT_AUTHENTICATE_TOKEN", target.token());
    environment.put("GRPC_DEFAULT_SSL_ROOTS_FILE_PATH", target.caPem().toString());
    return run(
        List.of(
            env.dir().resolve("bin").resolve("spark-pipelines").toString(),
            "--remote",
            // use_ssl: to "localhost", PySpark would otherwise send the token without TLS.
            "sc://" + target.host() + ":" + target.port() + "/;use_ssl=true",
            "run",
            "--spec",
            project.resolve("spark-pipeline.yml").toString()),
        environment,
        project);
  }

  /** pipelines_client.py's JSON result as {@code principal} through the proxy, or directly when null. */
  private static JsonNode client(String principal, String command, String argument)
      throws Exception {
    Run run = clientRun(principal, command, argument);
    JsonNode result = lastJson(run);
    assertEquals("ok", result.path("outcome").asText(), run.toString());
    return result.path("detail");
  }

  private static Run clientRun(String principal, String command, String argument) throws Exception {
    List<String> args =
        new ArrayList<>(List.of(env.python().toString(), CLIENT.toAbsolutePath().toString()));
    Map<String, String> environment = new LinkedHashMap<>();
    if (principal == null) {
      args.addAll(List.of("--host", "localhost", "--port", Integer.toString(server.port())));
    } else {
      Target target = proxy.target(principal);
      args.addAll(
          List.of(
              "--host", target.host(),
              "--port", Integer.toString(target.port()),
              "--ca", target.caPem().toString()));
      environment.put(PySparkClient.TOKEN_ENV, target.token());
    }
    args.addAll(List.of(command, argument));
    return run(args, environment, dir);
  }

  private static JsonNode lastJson(Run run) throws IOException {
    List<String> json = run.output().lines().filter(l -> l.startsWith("{\"outcome\"")).toList();
    assertFalse(json.isEmpty(), "no result line: " + run);
    return JSON.readTree(json.get(json.size() - 1));
  }

  private static Run run(List<String> command, Map<String, String> environment, Path workDir)
      throws Exception {
    Path log = Files.createTempFile(dir, "run-", ".log");
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(workDir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    Map<String, String> processEnv = builder.environment();
    // Only what this test sets: nothing a developer's shell set for their own PySpark or Spark.
    for (String inherited :
        List.of(
            "SPARK_REMOTE",
            "SPARK_HOME",
            "SPARK_CONF_DIR",
            "PYTHONPATH",
            "PYSPARK_PYTHON",
            "SPARK_CONNECT_AUTHENTICATE_TOKEN",
            "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
            PySparkClient.TOKEN_ENV)) {
      processEnv.remove(inherited);
    }
    // spark-pipelines runs the CLI with the first python3 on the PATH (or PYSPARK_PYTHON).
    Path bin = env.dir().resolve("bin");
    processEnv.put("PYSPARK_PYTHON", env.python().toString());
    processEnv.put("PATH", bin + java.io.File.pathSeparator + processEnv.getOrDefault("PATH", ""));
    processEnv.putAll(environment);
    Process process = builder.start();
    boolean finished = false;
    try {
      finished = process.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    } finally {
      if (!finished) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    assertTrue(finished, "did not finish in " + TIMEOUT + ": " + command + "\n" + output);
    return new Run(process.exitValue(), output, log);
  }

  /** What every refusal must show the user: the rule, the remedy, and none of Spark's internal errors. */
  private static void assertRefused(String shown, String rule, String remedy) {
    assertTrue(
        shown.contains("Sparkgate policy rule '" + rule + "' refused this request"),
        "the rule " + rule + " is not named in:\n" + shown);
    assertTrue(
        shown
            .toLowerCase(java.util.Locale.ROOT)
            .contains(remedy.toLowerCase(java.util.Locale.ROOT)),
        "no remedy (" + remedy + ") in:\n" + shown);
    assertFalse(shown.contains("INTERNAL_ERROR"), shown);
    assertFalse(shown.contains("Cannot find main error class"), shown);
  }

  private static void copy(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path source : files.filter(p -> !p.toString().contains("__pycache__")).toList()) {
        Path target = to.resolve(from.relativize(source).toString());
        if (Files.isDirectory(source)) {
          Files.createDirectories(target);
        } else {
          Files.copy(source, target);
        }
      }
    }
  }
}
