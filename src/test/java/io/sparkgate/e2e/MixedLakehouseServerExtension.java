package io.sparkgate.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives end-to-end tests one real Spark Connect 3.5.7 server with BOTH Hudi 1.2.0 and Iceberg 1.10.0 loaded
 * (from spark-server-35/), started on first use and shared by every IT class that asks for it; separate from
 * the shared 4.0 server of {@link SparkServerExtension}. Tests receive it as a {@link MixedServer} parameter.
 *
 * <p>Configuration as in the reference recipe: both session extensions, {@code spark_catalog} = Hudi's
 * HoodieCatalog, an Iceberg {@code hadoop} catalog named {@value #ICEBERG_CATALOG}; warehouses in a fresh temp
 * directory; the session time zone pinned to UTC so timestamps mean the same to the tests, the proxy and Spark.
 * No 3.5 JVM client exists here: drive it with {@link ConnectRequests} (no ReleaseSession on 3.5).
 */
final class MixedLakehouseServerExtension implements BeforeAllCallback, ParameterResolver {

  static final String CLASSPATH_PROPERTY = "sparkgate.sparkServer35Classpath";
  private static final Path DEFAULT_CLASSPATH_FILE = Path.of("target", "spark-server-35.classpath");
  private static final Path WORK_DIR = Path.of("target", "e2e-mixed");
  static final String ICEBERG_CATALOG = "iceberg";
  static final String HUDI_EXTENSION = "org.apache.spark.sql.hudi.HoodieSparkSessionExtension";
  static final String ICEBERG_EXTENSION =
      "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions";

  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(MixedLakehouseServerExtension.class);

  /** The running mixed server and the configuration it was given. */
  record MixedServer(SparkConnectServerProcess process, Map<String, String> conf)
      implements AutoCloseable {
    @Override
    public void close() {
      process.close();
    }
  }

  static MixedServer sharedServer(ExtensionContext context) {
    return context
        .getRoot()
        .getStore(NAMESPACE)
        .getOrComputeIfAbsent("mixed-server", key -> startServer(), MixedServer.class);
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    sharedServer(context);
  }

  @Override
  public boolean supportsParameter(
      ParameterContext parameterContext, ExtensionContext extensionContext) {
    return parameterContext.getParameter().getType() == MixedServer.class;
  }

  @Override
  public Object resolveParameter(
      ParameterContext parameterContext, ExtensionContext extensionContext) {
    return sharedServer(extensionContext);
  }

  private static MixedServer startServer() {
    Path classpathFile =
        Path.of(System.getProperty(CLASSPATH_PROPERTY, DEFAULT_CLASSPATH_FILE.toString()));
    if (!Files.isRegularFile(classpathFile)) {
      throw new IllegalStateException(
          "No Spark 3.5 server classpath at "
              + classpathFile
              + ". Run the ITs through "
              + "`mvn verify` (pre-integration-test writes it), or create it with `mvn -f spark-server-35/pom.xml "
              + "dependency:build-classpath -Dmdep.outputFile=target/spark-server-35.classpath`.");
    }
    Path workDir;
    try {
      workDir =
          Files.createTempDirectory(Files.createDirectories(WORK_DIR), "run-").toAbsolutePath();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Map<String, String> conf = new LinkedHashMap<>();
    conf.put("spark.serializer", "org.apache.spark.serializer.KryoSerializer");
    conf.put("spark.sql.extensions", ICEBERG_EXTENSION + "," + HUDI_EXTENSION);
    conf.put("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog");
    conf.put("spark.sql.catalog." + ICEBERG_CATALOG, "org.apache.iceberg.spark.SparkCatalog");
    conf.put("spark.sql.catalog." + ICEBERG_CATALOG + ".type", "hadoop");
    conf.put(
        "spark.sql.catalog." + ICEBERG_CATALOG + ".warehouse",
        workDir.resolve("iceberg-warehouse").toString());
    conf.put("spark.sql.session.timeZone", "UTC");
    // Small local jobs: Spark's default 200 shuffle partitions make every MERGE and aggregate slow
    // on 2 cores.
    conf.put("spark.sql.shuffle.partitions", "2");
    SparkConnectServerProcess server =
        SparkConnectServerProcess.start(classpathFile, workDir, conf);
    System.out.println(
        "Started mixed Hudi + Iceberg "
            + server
            + " in "
            + server.startupTime().toMillis()
            + " ms");
    return new MixedServer(server, Map.copyOf(conf));
  }
}
