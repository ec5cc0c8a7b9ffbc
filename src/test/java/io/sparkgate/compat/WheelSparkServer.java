package io.sparkgate.compat;

import io.sparkgate.e2e.SparkConnectServerProcess;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.zip.ZipFile;

/**
 * A Spark Connect server from the jars a {@code pyspark} wheel ships ({@code pyspark/jars/}: a whole Spark
 * distribution), for the versions whose Connect server Maven Central does not serve (4.1.x, 4.3.0). It runs
 * in a child JVM exactly like the Maven-built servers ({@link SparkConnectServerProcess}: the same JVM
 * options, readiness probe and log), only with {@code pyspark/jars/*} as its classpath.
 *
 * <p>The wheel is installed in the same virtual environment as {@link PySparkClient#full} of that version,
 * so the server and the client of one version cost one download.
 *
 * <pre>{@code
 * WheelSparkServer wheel = new WheelSparkServer("4.3.0");
 * try (SparkConnectServerProcess server = wheel.start(workDir, conf)) { ... server.port() ... }
 * }</pre>
 */
final class WheelSparkServer implements SparkVersionServer {
  static final String MAIN_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer";
  static final String SERVER_CLASS_ENTRY = MAIN_CLASS.replace('.', '/') + ".class";

  /**
   * A 4.3 driver took 60 to 100 s to listen on a machine loaded far beyond its 2 cores (the Maven servers'
   * 2 minutes were not enough there).
   */
  private static final Duration STARTUP_TIMEOUT = Duration.ofMinutes(5);

  private final String version;

  WheelSparkServer(String version) {
    if (!version.matches("\\d+\\.\\d+\\.\\d+")) {
      throw new IllegalArgumentException("a Spark version like 4.3.0, not " + version);
    }
    this.version = version;
  }

  @Override
  public String version() {
    return version;
  }

  /** Empty when this machine can create the wheel's virtual environment; otherwise why not. */
  @Override
  public Optional<String> unavailable() {
    return PythonEnvs.unavailable();
  }

  /** The suite's server: {@link CompatServers#SHARED_CONF}'s short result streams. */
  @Override
  public Running start(Path workDir) throws IOException, InterruptedException {
    return new CompatServers.ProcessRunning(start(workDir, CompatServers.SHARED_CONF));
  }

  /**
   * Installs the wheel if needed (minutes the first time; pip's cache after), then starts its Connect server,
   * plaintext on a free loopback port, and waits until it answers.
   *
   * @param workDir the server's log, warehouse and scratch space
   * @param sparkConf extra Spark configuration (e.g. short reattachable result streams)
   */
  SparkConnectServerProcess start(Path workDir, Map<String, String> sparkConf)
      throws IOException, InterruptedException {
    Path jars = jars(PySparkClient.full(version).env());
    Files.createDirectories(workDir);
    Path classpath = workDir.resolve("wheel-" + version + ".classpath");
    // java expands the "dir/*" wildcard itself: every jar of the distribution, in no particular
    // order.
    Files.writeString(classpath, jars.toAbsolutePath() + "/*");
    return SparkConnectServerProcess.start(classpath, workDir, sparkConf, STARTUP_TIMEOUT);
  }

  /**
   * The wheel's {@code pyspark/jars}, checked to hold the Connect server (a {@code spark-connect_*.jar}, or
   * failing that any jar with the server's main class), so a wheel without one fails with that said.
   */
  static Path jars(PythonEnvs.Env env) throws IOException {
    Path jars = env.sitePackages().resolve("pyspark").resolve("jars");
    if (!Files.isDirectory(jars)) {
      throw new IllegalStateException(
          "no pyspark/jars in " + env.dir() + ": not a full pyspark wheel");
    }
    List<Path> all = new ArrayList<>();
    try (DirectoryStream<Path> stream = Files.newDirectoryStream(jars, "*.jar")) {
      stream.forEach(all::add);
    }
    for (Path jar : all) {
      if (jar.getFileName().toString().startsWith("spark-connect_") && holdsServer(jar)) {
        return jars;
      }
    }
    for (Path jar : all) {
      if (holdsServer(jar)) {
        return jars;
      }
    }
    throw new IllegalStateException(
        "the pyspark wheel in "
            + env.dir()
            + " has no Spark Connect server ("
            + MAIN_CLASS
            + ") in any of its "
            + all.size()
            + " jars");
  }

  private static boolean holdsServer(Path jar) throws IOException {
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      return zip.getEntry(SERVER_CLASS_ENTRY) != null;
    }
  }

  @Override
  public String toString() {
    return "Spark " + version + " (pyspark wheel)";
  }
}
