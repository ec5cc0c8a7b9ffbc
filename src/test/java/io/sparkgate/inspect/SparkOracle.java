package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Assumptions;

/**
 * The client of Spark's own parser (src/test/spark-oracle/SparkParserOracle.java) in a child JVM on the
 * spark-server classpath: one JVM for the whole test JVM, shared, started on first use. Spark never reaches
 * our classpath: the program is compiled against the Spark classpath into target/ and talks over pipes.
 */
final class SparkOracle {
  /** What Spark is asked to parse: a plan, an expression, a multi-part identifier. */
  enum Mode {
    PLAN("plan"),
    EXPR("expr"),
    IDENT("ident");

    final String wire;

    Mode(String wire) {
      this.wire = wire;
    }
  }

  record Request(Mode mode, SqlParserFlags flags, String text) {}

  static final Path SOURCE = Path.of("src/test/spark-oracle/SparkParserOracle.java");
  static final Path CLASSES = Path.of("target/spark-oracle/classes");
  static final Path LOG = Path.of("target/spark-oracle/oracle.log");
  private static final ObjectMapper JSON = new ObjectMapper();

  private static SparkOracle shared;

  private final Process process;
  private final BufferedWriter in;
  private final BufferedReader out;

  private SparkOracle(Process process) {
    this.process = process;
    this.in =
        new BufferedWriter(
            new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), 1 << 16);
    this.out =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8), 1 << 16);
  }

  /**
   * The shared oracle; without the Spark server's classpath the test is skipped with the reason, or fails
   * under {@code SPARKGATE_CI=1}.
   */
  static synchronized SparkOracle get() {
    if (shared != null) return shared;
    String prop = System.getProperty("sparkgate.sparkServerClasspath");
    Path cpFile = Path.of(prop != null ? prop : "target/spark-server.classpath");
    if (!Files.isRegularFile(cpFile)) {
      String why =
          "SPARK PARSER ORACLE NOT RUN: no Spark server classpath at "
              + cpFile
              + "; `mvn test` writes it (execution spark-server-classpath), or run `mvn -f"
              + " spark-server/pom.xml dependency:build-classpath"
              + " -Dmdep.outputFile=target/spark-server.classpath`";
      System.err.println(why);
      if ("1".equals(System.getenv("SPARKGATE_CI"))) fail(why + ", and SPARKGATE_CI=1 requires it");
      Assumptions.abort(why);
    }
    try {
      String sparkCp = Files.readString(cpFile).strip();
      compile(sparkCp);
      Files.createDirectories(LOG.getParent());
      Process p =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-Xss16m",
                  "-Xmx384m",
                  "-XX:+UseSerialGC",
                  "-XX:TieredStopAtLevel=1",
                  "-cp",
                  CLASSES + java.io.File.pathSeparator + sparkCp,
                  "SparkParserOracle")
              .redirectError(LOG.toFile())
              .start();
      SparkOracle oracle = new SparkOracle(p);
      String ready = oracle.out.readLine();
      if (ready == null || !ready.contains("ready")) {
        throw new IllegalStateException(
            "the Spark parser oracle did not start (see " + LOG + "): " + ready);
      }
      Runtime.getRuntime().addShutdownHook(new Thread(p::destroy));
      shared = oracle;
      return oracle;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Compiles the program once, and again only when its source is newer than its class. */
  private static void compile(String sparkCp) throws IOException {
    Path cls = CLASSES.resolve("SparkParserOracle.class");
    if (Files.isRegularFile(cls)
        && Files.getLastModifiedTime(cls).compareTo(Files.getLastModifiedTime(SOURCE)) > 0) {
      return;
    }
    Files.createDirectories(CLASSES);
    int rc =
        ToolProvider.getSystemJavaCompiler()
            .run(
                null,
                null,
                null,
                "-nowarn",
                "-proc:none",
                "-d",
                CLASSES.toString(),
                "-cp",
                sparkCp,
                SOURCE.toString());
    if (rc != 0) throw new IllegalStateException("javac failed on " + SOURCE);
  }

  /** Asks every request in order; the requests are written by a second thread while answers are read. */
  synchronized List<JsonNode> ask(List<Request> requests) {
    CompletableFuture<Void> writing =
        CompletableFuture.runAsync(
            () -> {
              try {
                for (Request r : requests) in.write(line(r));
                in.flush();
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            });
    List<JsonNode> answers = new ArrayList<>(requests.size());
    try {
      for (int i = 0; i < requests.size(); i++) {
        String line = out.readLine();
        if (line == null) {
          throw new IllegalStateException(
              "the Spark parser oracle exited (" + LOG + ") at: " + requests.get(i).text());
        }
        answers.add(JSON.readTree(line));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    writing.join();
    return answers;
  }

  JsonNode ask(Request request) {
    return ask(List.of(request)).get(0);
  }

  /**
   * Ends the child JVM (the next {@link #get()} starts another): the unit tests share one JVM, and the
   * oracle's heap should not sit beside them once the differential test is done.
   */
  static synchronized void stop() {
    if (shared == null) return;
    shared.process.destroy();
    shared = null;
  }

  private static String line(Request r) {
    SqlParserFlags f = r.flags();
    String flags =
        (f.legacySetOpsPrecedence() ? "1" : "0")
            + (f.legacyExponentLiteralAsDecimal() ? "1" : "0")
            + (f.enforceReservedKeywords() ? "1" : "0")
            + (f.doubleQuotedIdentifiers() ? "1" : "0");
    return r.mode().wire
        + '\t'
        + flags
        + '\t'
        + Base64.getEncoder().encodeToString(r.text().getBytes(StandardCharsets.UTF_8))
        + '\n';
  }
}
