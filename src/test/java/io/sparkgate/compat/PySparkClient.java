package io.sparkgate.compat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * PySpark's Connect client at one version, in a virtual environment of its own ({@link PythonEnvs}): either
 * {@code pyspark-client} (the thin client, no jars) or {@code pyspark[connect]} (the full package). It runs
 * src/test/python/compat/pyspark_client.py, which connects the way the docs tell users to (the token in the
 * {@code sc://} URL, the private CA through {@code GRPC_DEFAULT_SSL_ROOTS_FILE_PATH}, or through a custom
 * {@code ChannelBuilder}) and prints one {@link Outcome} per scenario.
 */
final class PySparkClient implements ClientUnderTest {
  static final Path PROGRAM = Path.of("src", "test", "python", "compat", "pyspark_client.py");

  /** The client program reads the token from here, so it never appears on a command line. */
  static final String TOKEN_ENV = "SPARKGATE_COMPAT_TOKEN";

  private static final Path RUNS = Path.of("target", "compat", "runs");
  private static final Duration TIMEOUT = Duration.ofMinutes(15);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** How the program tells gRPC to trust the proxy's private CA. */
  enum Trust {
    /** {@code GRPC_DEFAULT_SSL_ROOTS_FILE_PATH}: works with every version. */
    ENV("env"),
    /** A {@code ChannelBuilder} subclass with {@code grpc.ssl_channel_credentials(root_certificates=...)}. */
    CHANNEL_BUILDER("channel_builder");

    private final String flag;

    Trust(String flag) {
      this.flag = flag;
    }
  }

  private final String name;
  private final String version;
  private final String envName;
  private final List<String> requirements;
  private final Trust trust;

  private PySparkClient(
      String name, String version, String envName, List<String> requirements, Trust trust) {
    this.name = name;
    this.version = version;
    this.envName = envName;
    this.requirements = List.copyOf(requirements);
    this.trust = trust;
  }

  /** The thin client, {@code pyspark-client} (4.0 and later: pure Python, no Spark jars). */
  static PySparkClient thin(String version) {
    return new PySparkClient(
        "pyspark-client " + version,
        version,
        "pyspark-client-" + version,
        List.of("pyspark-client==" + version),
        Trust.ENV);
  }

  /** The full package with the Connect extra, {@code pyspark[connect]}; its jars are a whole Spark. */
  static PySparkClient full(String version) {
    List<String> requirements = new ArrayList<>();
    requirements.add("pyspark[connect]==" + version);
    requirements.addAll(pins(version));
    return new PySparkClient(
        "pyspark[connect] " + version,
        version,
        "pyspark-connect-" + version,
        requirements,
        Trust.ENV);
  }

  /** Upper bounds the package does not declare but needs, so that pip's newest picks import at all. */
  private static List<String> pins(String version) {
    // PySpark 3.5 requires numpy<2, but not a pyarrow that works with it: pyarrow 26 needs NumPy 2
    // and fails to import ("PyArrow >= 4.0.0 must be installed"). pandas 3 postdates 3.5 as well.
    return version.startsWith("3.") ? List.of("pandas<2.3", "pyarrow<18", "numpy<2") : List.of();
  }

  /** The same client trusting the CA through a custom {@code ChannelBuilder} instead of the variable. */
  PySparkClient withChannelBuilder() {
    return new PySparkClient(
        name + " (ChannelBuilder)", version, envName, requirements, Trust.CHANNEL_BUILDER);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String version() {
    return version;
  }

  @Override
  public Optional<String> unavailable() {
    return PythonEnvs.unavailable();
  }

  /** Its virtual environment, created on first use (shared with the wheel server of the same version). */
  PythonEnvs.Env env() throws IOException, InterruptedException {
    return PythonEnvs.get(envName, requirements);
  }

  @Override
  public List<Outcome> run(Target target, List<Scenario> scenarios) throws Exception {
    if (scenarios.isEmpty()) {
      return List.of();
    }
    List<String> arguments =
        new ArrayList<>(List.of("--trust", trust.flag, "--server-version", target.serverVersion()));
    scenarios.forEach(s -> arguments.add(s.id()));
    Run run = runProgram(PROGRAM, target, Map.of(), arguments);
    Path dir = run.dir();
    boolean finished = run.finished();
    Map<Scenario, Outcome> reported = parse(dir.resolve("stdout.jsonl"));
    String why =
        finished
            ? "the client exited with code " + run.exitCode() + " before reporting it"
            : "the client did not finish in " + TIMEOUT;
    List<Outcome> outcomes = new ArrayList<>();
    for (Scenario scenario : scenarios) {
      Outcome outcome = reported.get(scenario);
      outcomes.add(
          outcome != null
              ? outcome
              : new Outcome(
                  scenario,
                  "fail",
                  why + " (" + dir + "); its last output:\n" + tail(dir.resolve("stderr.log"))));
    }
    return outcomes;
  }

  /**
   * What a client program run left: its directory (standard output in {@code stdout.jsonl}, standard error in
   * {@code stderr.log}), whether it ended in time, and its exit code (-1 if it had to be killed).
   */
  record Run(Path dir, boolean finished, int exitCode) {}

  /**
   * Runs a Python program of src/test/python/compat with this client's interpreter, the target's host, port
   * and CA as {@code --host}, {@code --port} and {@code --ca}, and then {@code arguments}. Its environment
   * holds the target's token in {@value #TOKEN_ENV} plus {@code env} (other secrets go there too, never on the
   * command line), and nothing a developer's shell set for their own PySpark.
   */
  Run runProgram(Path program, Target target, Map<String, String> env, List<String> arguments)
      throws IOException, InterruptedException {
    PythonEnvs.Env venv = env();
    Path dir =
        Files.createDirectories(RUNS.resolve(envName + "-" + UUID.randomUUID()).toAbsolutePath());
    List<String> command = new ArrayList<>();
    command.add(venv.python().toString());
    command.add(program.toAbsolutePath().toString());
    command.addAll(List.of("--host", target.host(), "--port", Integer.toString(target.port())));
    if (target.caPem() != null) {
      command.addAll(List.of("--ca", target.caPem().toAbsolutePath().toString()));
    }
    command.addAll(arguments);

    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectOutput(dir.resolve("stdout.jsonl").toFile())
            .redirectError(dir.resolve("stderr.log").toFile());
    Map<String, String> environment = builder.environment();
    clearInherited(environment);
    if (target.token() != null) {
      environment.put(TOKEN_ENV, target.token());
    }
    environment.putAll(env);
    Process process = builder.start();
    boolean finished = false;
    try {
      finished = process.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    } finally {
      // Timed out, or the test was interrupted: a client left running would hold the server's
      // cores.
      if (!finished) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
    return new Run(dir, finished, finished ? process.exitValue() : -1);
  }

  /** Only what a client program is given: nothing a developer's shell set for their own PySpark. */
  static void clearInherited(Map<String, String> environment) {
    for (String inherited :
        List.of(
            "SPARK_REMOTE",
            "SPARK_CONNECT_AUTHENTICATE_TOKEN",
            "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
            "SPARK_HOME",
            "PYTHONPATH",
            TOKEN_ENV)) {
      environment.remove(inherited);
    }
  }

  /** Skips the calling test (fails it under CI) when this machine cannot create virtual environments. */
  static void requireVenv() {
    DebianPackages.require(
        "python3-venv",
        "python3 -m venv, for the PySpark clients' virtual environments",
        () -> PythonEnvs.unavailable().isEmpty() ? "python3" : null);
  }

  private static Map<Scenario, Outcome> parse(Path stdout) throws IOException {
    Map<Scenario, Outcome> outcomes = new LinkedHashMap<>();
    for (String line : Files.readAllLines(stdout, StandardCharsets.UTF_8)) {
      if (!line.startsWith("{")) {
        continue; // something PySpark or a library printed
      }
      JsonNode node = JSON.readTree(line);
      Scenario scenario = Scenario.byId(node.path("scenario").asText());
      outcomes.put(
          scenario,
          new Outcome(scenario, node.path("outcome").asText(), node.path("detail").asText()));
    }
    return outcomes;
  }

  static String tail(Path file) throws IOException {
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 25), lines.size()));
  }

  @Override
  public String toString() {
    return name;
  }
}
