package io.sparkgate.compat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * PySpark's full Connect client at one version for tests outside this package (e2e): the interpreter of its
 * cached virtual environment ({@link PythonEnvs}), created on first use, and the environment a client program
 * should start with.
 */
public final class PySparkEnv {
  private PySparkEnv() {}

  /** Skips the caller (fails it under CI) when this machine cannot create virtual environments. */
  public static void requireVenv() {
    PySparkClient.requireVenv();
  }

  /** {@code bin/python} of the {@code pyspark[connect]==version} environment. */
  public static Path python(String version) throws IOException, InterruptedException {
    return PySparkClient.full(version).env().python();
  }

  /**
   * The Spark distribution the {@code pyspark[connect]==version} wheel ships ({@code site-packages/pyspark}:
   * {@code bin/spark-submit}, {@code jars/}), installed on first use.
   */
  public static Path sparkHome(String version) throws IOException, InterruptedException {
    return PySparkClient.full(version).env().sitePackages().resolve("pyspark");
  }

  /** Removes what a developer's shell set for their own PySpark from a child's environment. */
  public static void clearInherited(Map<String, String> environment) {
    PySparkClient.clearInherited(environment);
  }
}
