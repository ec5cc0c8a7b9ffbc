package io.sparkgate.compat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgate.testing.DebianPackages;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The Apache Spark Connect Go client ({@code github.com/apache/spark-connect-go}), driven through the program in
 * {@code src/test/go/compat}, which this class builds with the machine's Go toolchain into {@code
 * target/compat/go/} (again only when its sources or the toolchain change; modules come from the user's module
 * cache).
 *
 * <p>The token reaches the program in an environment variable and becomes {@code ;token=} in its {@code sc://}
 * URL; the Go client then uses TLS with the system roots, so the private CA goes in {@code SSL_CERT_FILE}, the way
 * docs/clients/go.md tells users to pass it. Without a token the client connects in plaintext.
 */
final class GoClient implements ClientUnderTest {
  static final Path SOURCES = Path.of("src", "test", "go", "compat");
  private static final Path BUILD_DIR = Path.of("target", "compat", "go");
  private static final List<String> GO = List.of("go", "/usr/local/go/bin/go");
  private static final String MODULE = "github.com/apache/spark-connect-go";
  private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(15);
  private static final Duration SCENARIO_TIMEOUT = Duration.ofMinutes(2);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String moduleVersion;

  GoClient() {
    this.moduleVersion = moduleVersion(SOURCES.resolve("go.mod"));
  }

  @Override
  public String name() {
    return "Go client " + moduleVersion;
  }

  @Override
  public String version() {
    return moduleVersion;
  }

  /**
   * The module is generated from Spark 4.0's protocol and its README asks for a 4.0+ server (its module
   * version is not a Spark version).
   */
  @Override
  public boolean supportedBySpark(String serverVersion) {
    return !serverVersion.startsWith("3.");
  }

  @Override
  public Optional<String> unavailable() {
    return go() == null
        ? Optional.of(
            "the Go toolchain (go) is not installed; it is needed to build the Spark Connect Go client")
        : Optional.empty();
  }

  @Override
  public List<Outcome> run(Target target, List<Scenario> scenarios) throws Exception {
    return run(target, scenarios, target.caPem(), List.of());
  }

  /**
   * Like {@link #run(Target, List)}, with {@code SSL_CERT_FILE} set to {@code caFile} (or unset when null), so a
   * test can show that the CA is what makes the TLS connection work, and more flags for the program ({@code
   * -reattach}, {@code -scenario-timeout 10s}).
   */
  List<Outcome> run(Target target, List<Scenario> scenarios, Path caFile, List<String> flags)
      throws Exception {
    Path binary = build();
    Path work = Files.createDirectories(BUILD_DIR.resolve("runs"));
    Path out = Files.createTempFile(work, "outcomes-", ".jsonl");
    Path err = Files.createTempFile(work, "stderr-", ".txt");
    List<String> command = new ArrayList<>();
    command.add(binary.toAbsolutePath().toString());
    command.addAll(List.of("-host", target.host(), "-port", Integer.toString(target.port())));
    command.addAll(
        List.of(
            "-scenarios",
            scenarios.stream().map(Scenario::id).collect(Collectors.joining(",")),
            "-scenario-timeout",
            SCENARIO_TIMEOUT.toSeconds() + "s"));
    command.addAll(flags); // the program reads the last of repeated flags
    if (target.serverVersion() != null) {
      command.addAll(List.of("-expect-version", target.serverVersion()));
    }
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
    Map<String, String> env = builder.environment();
    env.remove("SPARKGATE_COMPAT_TOKEN");
    env.remove("SSL_CERT_FILE");
    env.remove("SSL_CERT_DIR");
    if (target.token() != null) {
      env.put("SPARKGATE_COMPAT_TOKEN", target.token());
    }
    if (caFile != null) {
      env.put("SSL_CERT_FILE", caFile.toAbsolutePath().toString());
    }
    Process process = builder.start();
    // Each scenario has its own limit inside the program; this one catches a program that hangs
    // anyway.
    Duration limit = SCENARIO_TIMEOUT.multipliedBy(scenarios.size() + 1L);
    boolean exited = process.waitFor(limit.toSeconds(), TimeUnit.SECONDS);
    if (!exited) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    List<Outcome> outcomes = parse(Files.readAllLines(out, StandardCharsets.UTF_8), scenarios);
    String why =
        exited
            ? "the Go client program exited with code " + process.exitValue()
            : "the Go client program did not finish within " + limit.toSeconds() + " s";
    String stderr = tail(Files.readString(err, StandardCharsets.UTF_8));
    // A program that stopped early still tells the table which scenarios it never reached, and why.
    for (Scenario missing : scenarios.subList(outcomes.size(), scenarios.size())) {
      outcomes.add(
          new Outcome(missing, "fail", why + " before reporting this scenario: " + stderr));
    }
    Files.deleteIfExists(out);
    Files.deleteIfExists(err);
    return outcomes;
  }

  /** One outcome per line, in the order the scenarios were asked for. */
  static List<Outcome> parse(List<String> lines, List<Scenario> scenarios) throws IOException {
    List<Outcome> outcomes = new ArrayList<>();
    for (String line : lines) {
      if (line.isBlank()) {
        continue;
      }
      JsonNode node = JSON.readTree(line);
      Scenario scenario = Scenario.byId(node.path("scenario").asText());
      if (outcomes.size() >= scenarios.size() || scenarios.get(outcomes.size()) != scenario) {
        throw new IOException("the Go client program reported an unexpected scenario: " + line);
      }
      outcomes.add(
          new Outcome(scenario, node.path("outcome").asText(), node.path("detail").asText()));
    }
    return outcomes;
  }

  /**
   * The program, built now unless {@code target/compat/go} holds a build of the same sources by the same
   * toolchain.
   */
  synchronized Path build() throws IOException, InterruptedException {
    String go = go();
    if (go == null) {
      throw new IllegalStateException(unavailable().orElseThrow());
    }
    Path binary = BUILD_DIR.resolve("sparkgate-compat-go");
    Path stamp = BUILD_DIR.resolve("sparkgate-compat-go.sha256");
    String key = buildKey(go);
    if (Files.isExecutable(binary)
        && Files.isRegularFile(stamp)
        && Files.readString(stamp).equals(key)) {
      return binary;
    }
    Files.createDirectories(BUILD_DIR);
    Path log = BUILD_DIR.resolve("build.log");
    long start = System.nanoTime();
    Process process =
        new ProcessBuilder(
                go, "build", "-mod=readonly", "-o", binary.toAbsolutePath().toString(), ".")
            .directory(SOURCES.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    if (!process.waitFor(BUILD_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      throw new IOException(
          "go build did not finish within " + BUILD_TIMEOUT.toMinutes() + " min; see " + log);
    }
    if (process.exitValue() != 0) {
      throw new IOException("go build failed: " + tail(Files.readString(log)));
    }
    Files.writeString(stamp, key);
    System.out.printf(
        "GoClient: built %s in %d ms%n",
        binary, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
    return binary;
  }

  /** Hash of the program's sources (go.mod, go.sum, *.go) and the toolchain's version. */
  private static String buildKey(String go) throws IOException {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      digest.update(toolchainVersion(go).getBytes(StandardCharsets.UTF_8));
      List<Path> files;
      try (Stream<Path> listing = Files.list(SOURCES)) {
        files =
            listing
                .filter(
                    p -> {
                      String name = p.getFileName().toString();
                      return name.equals("go.mod") || name.equals("go.sum") || name.endsWith(".go");
                    })
                .sorted()
                .toList();
      }
      for (Path file : files) {
        digest.update(file.getFileName().toString().getBytes(StandardCharsets.UTF_8));
        digest.update(Files.readAllBytes(file));
      }
      return HexFormat.of().formatHex(digest.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String toolchainVersion(String go) throws IOException {
    try {
      Process p = new ProcessBuilder(go, "version").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      p.waitFor(1, TimeUnit.MINUTES);
      return out.trim();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted asking " + go + " for its version", e);
    }
  }

  private static String go() {
    return DebianPackages.firstWorking(GO, "version");
  }

  /** The spark-connect-go version go.mod requires, e.g. {@code v0.1.1-0.20250826122459-0e3d565b63e6}. */
  static String moduleVersion(Path goMod) {
    try {
      Matcher m =
          Pattern.compile("(?m)^\\s*(?:require\\s+)?" + Pattern.quote(MODULE) + "\\s+(\\S+)")
              .matcher(Files.readString(goMod));
      if (!m.find()) {
        throw new IllegalStateException(goMod + " does not require " + MODULE);
      }
      return m.group(1);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The start (a Go panic's message) and the end of a long output. */
  private static String tail(String text) {
    String trimmed = text.strip();
    return trimmed.length() <= 2000
        ? trimmed
        : trimmed.substring(0, 1000) + " ... " + trimmed.substring(trimmed.length() - 1000);
  }
}
