package io.sparkgate.e2e;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives end-to-end tests one real Spark Connect 4.0 server per test JVM, started on first use and shared by
 * every IT class (a Spark driver takes 10-20 s and 2 GB; our CI has 2 cores).
 *
 * <pre>{@code
 * @ExtendWith(SparkServerExtension.class)
 * class SomethingIT {
 *   @BeforeAll static void connect(SparkConnectServerProcess server) { ... server.port() ... }
 * }
 * }</pre>
 *
 * The server lives in the root context's store, which closes it when the whole suite ends; its JVM shutdown hook
 * covers crashes.
 */
public final class SparkServerExtension implements BeforeAllCallback, ParameterResolver {

  static final String CLASSPATH_PROPERTY = "sparkgate.sparkServerClasspath";
  private static final Path DEFAULT_CLASSPATH_FILE = Path.of("target", "spark-server.classpath");
  private static final Path WORK_DIR = Path.of("target", "e2e");

  /**
   * Small reattach limits make the server end every ExecutePlan response stream after 1 s or 1 MiB, so any
   * sizeable result makes the client send ReattachExecute: the proxy tests get that path for free.
   */
  static final Map<String, String> SHARED_CONF =
      Map.of(
          "spark.connect.execute.reattachable.senderMaxStreamDuration", "1s",
          "spark.connect.execute.reattachable.senderMaxStreamSize", "1m");

  /** Iceberg's session extension and a Hadoop catalog `iceberg`: an Iceberg-only server (no Hudi). */
  static Map<String, String> icebergOnly(Path workDir) {
    return Map.of(
        "spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.iceberg", "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.iceberg.type", "hadoop",
        "spark.sql.catalog.iceberg.warehouse",
            workDir.resolve("iceberg").toAbsolutePath().toString());
  }

  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(SparkServerExtension.class);

  /** The shared server, starting it if this is the first request in this JVM. */
  static SparkConnectServerProcess sharedServer(ExtensionContext context) {
    return context
        .getRoot()
        .getStore(NAMESPACE)
        .getOrComputeIfAbsent("server", key -> startServer(), SparkConnectServerProcess.class);
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    // Start (or fail) before the class's own @BeforeAll methods, so a broken server reads as such.
    sharedServer(context);
  }

  @Override
  public boolean supportsParameter(
      ParameterContext parameterContext, ExtensionContext extensionContext) {
    return parameterContext.getParameter().getType() == SparkConnectServerProcess.class;
  }

  @Override
  public Object resolveParameter(
      ParameterContext parameterContext, ExtensionContext extensionContext) {
    return sharedServer(extensionContext);
  }

  private static SparkConnectServerProcess startServer() {
    Path classpathFile = classpathFile();
    Path workDir;
    try {
      // A fresh directory per run: a warehouse left by an earlier run would make CREATE TABLE fail.
      workDir = Files.createTempDirectory(Files.createDirectories(WORK_DIR), "run-");
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    Map<String, String> conf = new java.util.HashMap<>(SHARED_CONF);
    conf.putAll(icebergOnly(workDir));
    SparkConnectServerProcess server =
        SparkConnectServerProcess.start(classpathFile, workDir, conf);
    System.out.println("Started " + server + " in " + server.startupTime().toMillis() + " ms");
    return server;
  }

  /** The Spark server's classpath file, for a test that starts (and kills) a server of its own. */
  static Path classpathFile() {
    Path classpathFile =
        Path.of(System.getProperty(CLASSPATH_PROPERTY, DEFAULT_CLASSPATH_FILE.toString()));
    if (!Files.isRegularFile(classpathFile)) {
      throw new IllegalStateException(
          "No Spark server classpath at "
              + classpathFile
              + ". Run the ITs through "
              + "`mvn verify` (it is written before the unit tests), or create it with `mvn -f spark-server/pom.xml "
              + "dependency:build-classpath -Dmdep.outputFile=target/spark-server.classpath`.");
    }
    return classpathFile;
  }
}
