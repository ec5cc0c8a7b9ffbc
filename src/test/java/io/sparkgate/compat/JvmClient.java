package io.sparkgate.compat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The real Spark Connect JVM client at one version ({@code spark-connect-client-jvm_2.13}), running {@link
 * JvmClientProgram} in a child JVM whose classpath is that version's jars, resolved by spark-client-jvm/pom.xml
 * into {@code target/compat/spark-client-jvm-<version>.classpath}.
 */
final class JvmClient implements ClientUnderTest {

  private static final Path PROGRAM_DIR = Path.of("target", "compat", "jvm-program");
  private static final Path LOG_DIR = Path.of("target", "compat", "logs");
  private static final long TIMEOUT_MINUTES = 4;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What users add to the JVM's command line, as docs/clients/jvm.md says (checked by ClientDocsTest). */
  static final String ADD_OPENS = "--add-opens=java.base/java.nio=ALL-UNNAMED";

  static final String TRUST_STORE = "-Djavax.net.ssl.trustStore=";
  static final String TRUST_STORE_PASSWORD = "-Djavax.net.ssl.trustStorePassword=";
  static final String TRUST_STORE_TYPE = "-Djavax.net.ssl.trustStoreType=PKCS12";

  /** What follows host:port in the URL through the proxy: TLS on, the token in the URL. */
  static final String URL_PARAMETERS = "/;use_ssl=true;token=";

  private final String version;
  private final Path classpathFile;

  JvmClient(String version) {
    this.version = version;
    this.classpathFile = Path.of("target", "compat", "spark-client-jvm-" + version + ".classpath");
  }

  @Override
  public String name() {
    return "JVM client " + version;
  }

  @Override
  public String version() {
    return version;
  }

  @Override
  public Optional<String> unavailable() {
    return Files.isRegularFile(classpathFile)
        ? Optional.empty()
        : Optional.of(
            "no classpath at "
                + classpathFile
                + " (`mvn verify` resolves it in pre-integration-test from spark-client-jvm/pom.xml)");
  }

  @Override
  public List<Outcome> run(Target target, List<Scenario> scenarios) throws Exception {
    Files.createDirectories(LOG_DIR);
    Path log =
        LOG_DIR.resolve(
            ("jvm-"
                    + version
                    + "-on-"
                    + target.serverVersion()
                    + (target.isDirect() ? "-direct" : ""))
                + ".log");
    ProcessBuilder builder =
        processBuilder(target, scenarios.stream().map(Scenario::id).toList())
            .redirectError(log.toFile());
    Process process = builder.start();
    // A test JVM stopped mid-run must not leave a client behind (the timeout below covers hangs).
    Thread hook = new Thread(process::destroyForcibly, "compat-jvm-client-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    List<Outcome> outcomes = new ArrayList<>();
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      Thread reader =
          new Thread(
              () -> {
                try {
                  for (String line = out.readLine(); line != null; line = out.readLine()) {
                    Outcome o = parse(line);
                    if (o != null) {
                      synchronized (outcomes) {
                        outcomes.add(o);
                      }
                    }
                  }
                } catch (IOException e) {
                  // The process was killed on timeout; what was read stays.
                }
              },
              "compat-jvm-stdout");
      reader.start();
      if (!process.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      reader.join(TimeUnit.SECONDS.toMillis(10));
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // The hook runs anyway.
      }
    }
    synchronized (outcomes) {
      return Outcomes.complete(
          scenarios,
          outcomes,
          "the client program printed nothing for it (exit "
              + (process.isAlive() ? "none: killed" : process.exitValue())
              + "; log "
              + log
              + ")");
    }
  }

  /**
   * The child JVM that runs {@link JvmClientProgram} with {@code programArgs} against {@code target}: this
   * version's jars, the trust store for a proxy, the URL in the environment.
   */
  ProcessBuilder processBuilder(Target target, List<String> programArgs) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx512m");
    // The client's Arrow needs it on JDK 17, as for every user of the JVM client.
    command.add(ADD_OPENS);
    if (!target.isDirect()) {
      // How a user trusts a private CA with the JVM client (docs/clients/jvm.md).
      command.add(TRUST_STORE + target.trustStore());
      command.add(TRUST_STORE_PASSWORD + target.trustStorePassword());
      command.add(TRUST_STORE_TYPE);
    }
    command.add("-cp");
    command.add(
        programClasses().toAbsolutePath()
            + java.io.File.pathSeparator
            + Files.readString(classpathFile).trim());
    command.add(JvmClientProgram.class.getName());
    command.addAll(programArgs);
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().put(JvmClientProgram.URL_VARIABLE, url(target));
    return builder;
  }

  /** The URL as the docs tell users to write it: TLS on, the token in the URL. */
  static String url(Target target) {
    return target.isDirect()
        ? "sc://" + target.host() + ":" + target.port()
        : "sc://" + target.host() + ":" + target.port() + URL_PARAMETERS + target.token();
  }

  static Outcome parse(String line) {
    if (!line.startsWith("{\"scenario\"")) {
      return null;
    }
    try {
      JsonNode node = JSON.readTree(line);
      return new Outcome(
          Scenario.byId(node.get("scenario").asText()),
          node.get("outcome").asText(),
          node.get("detail").asText());
    } catch (IOException | IllegalArgumentException e) {
      return null;
    }
  }

  /**
   * Copies the program's compiled classes (and only them) out of the test classes, so the child JVM sees
   * nothing of the harness or of the test classpath's own Spark client.
   */
  private static synchronized Path programClasses() throws IOException {
    Path dir = PROGRAM_DIR.resolve(JvmClientProgram.class.getPackageName().replace('.', '/'));
    Files.createDirectories(dir);
    Path source;
    try {
      source =
          Path.of(
                  JvmClientProgram.class
                      .getResource(JvmClientProgram.class.getSimpleName() + ".class")
                      .toURI())
              .getParent();
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
    try (Stream<Path> files = Files.list(source)) {
      files
          .filter(
              f -> f.getFileName().toString().startsWith(JvmClientProgram.class.getSimpleName()))
          .forEach(
              f -> {
                try {
                  Files.copy(f, dir.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              });
    }
    return PROGRAM_DIR;
  }

  @Override
  public String toString() {
    return name();
  }
}
