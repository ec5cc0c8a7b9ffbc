package io.sparkgate.compat;

import io.sparkgate.e2e.SparkConnectServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The Spark Connect server versions the suite runs, oldest first: the one place a server is added.
 */
final class CompatServers {

  /**
   * Every server ends each ExecutePlan response stream after 1 s or 1 MiB, so the suite's large result makes
   * every client send ReattachExecute (as the e2e tests' shared server does).
   */
  static final Map<String, String> SHARED_CONF =
      Map.of(
          "spark.connect.execute.reattachable.senderMaxStreamDuration", "1s",
          "spark.connect.execute.reattachable.senderMaxStreamSize", "1m",
          // Small local jobs: 200 shuffle partitions make every aggregate slow on 2 cores.
          "spark.sql.shuffle.partitions", "2");

  private CompatServers() {}

  static List<SparkVersionServer> all() {
    return List.of(
        new ClasspathSparkServer(
            "3.5.7",
            classpath("sparkgate.sparkServer35Classpath", "target/spark-server-35.classpath"),
            CompatServers::hudiAndIceberg),
        new ClasspathSparkServer(
            "4.0.0",
            classpath("sparkgate.sparkServerClasspath", "target/spark-server.classpath"),
            workDir -> Map.of()),
        // 4.1.x: spark-connect_2.13 4.1.x is not served by the Maven registry; its server comes
        // from the `pyspark` 4.1 wheel's jars.
        new WheelSparkServer("4.1.4"),
        new ClasspathSparkServer(
            "4.2.0",
            classpath(
                "sparkgate.sparkServer42Classpath", "target/compat/spark-server-4.2.0.classpath"),
            workDir -> Map.of()),
        // 4.3.0: nothing of 4.3's Connect is served by Maven; the `pyspark` 4.3.0 wheel's jars.
        new WheelSparkServer("4.3.0"));
  }

  private static Path classpath(String property, String defaultFile) {
    return Path.of(System.getProperty(property, defaultFile));
  }

  /**
   * The mixed lakehouse configuration of e2e/MixedLakehouseServerExtension: Hudi's and Iceberg's session
   * extensions, Hudi's catalog as spark_catalog and a Hadoop Iceberg catalog.
   */
  private static Map<String, String> hudiAndIceberg(Path workDir) {
    Map<String, String> conf = new LinkedHashMap<>();
    conf.put("spark.serializer", "org.apache.spark.serializer.KryoSerializer");
    conf.put(
        "spark.sql.extensions",
        "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions,"
            + "org.apache.spark.sql.hudi.HoodieSparkSessionExtension");
    conf.put("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog");
    conf.put("spark.sql.catalog.iceberg", "org.apache.iceberg.spark.SparkCatalog");
    conf.put("spark.sql.catalog.iceberg.type", "hadoop");
    conf.put("spark.sql.catalog.iceberg.warehouse", workDir.resolve("iceberg").toString());
    return conf;
  }

  /**
   * A server started from a classpath file: one a Maven project resolved (spark-server/, spark-server-35/,
   * spark-server-42/), or, for versions Maven does not serve, the jars of a {@code pyspark} wheel listed the
   * same way. Its JVM flags come from spark-server/jvm.options.
   */
  static final class ClasspathSparkServer implements SparkVersionServer {
    interface Conf {
      Map<String, String> of(Path workDir);
    }

    private final String version;
    private final Path classpathFile;
    private final Conf conf;

    ClasspathSparkServer(String version, Path classpathFile, Conf conf) {
      this.version = version;
      this.classpathFile = classpathFile;
      this.conf = conf;
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
              "no Spark "
                  + version
                  + " server classpath at "
                  + classpathFile
                  + " (`mvn verify` writes it in pre-integration-test)");
    }

    @Override
    public Running start(Path workDir) {
      Map<String, String> all = new LinkedHashMap<>(conf.of(workDir.toAbsolutePath()));
      all.putAll(SHARED_CONF);
      return new ProcessRunning(SparkConnectServerProcess.start(classpathFile, workDir, all));
    }

    @Override
    public String toString() {
      return "Spark " + version + " from " + classpathFile;
    }
  }

  /** A {@link SparkVersionServer.Running} over the e2e harness's child-JVM server. */
  record ProcessRunning(SparkConnectServerProcess process) implements SparkVersionServer.Running {
    @Override
    public int port() {
      return process.port();
    }

    @Override
    public String reportedVersion() {
      return process.sparkVersion();
    }

    @Override
    public long reattachCount() {
      return process.reattachCount();
    }

    @Override
    public String logTail() {
      return process.logTail();
    }

    @Override
    public void close() {
      process.stop();
    }
  }
}
