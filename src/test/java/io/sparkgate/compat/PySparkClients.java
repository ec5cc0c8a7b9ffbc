package io.sparkgate.compat;

import java.util.List;

/**
 * The PySpark clients the suite runs: the newest thin client PyPI serves ({@code pyspark-client} stops at
 * 4.2.0; there is no 4.3.0), and the full package at the newest patch of each line from 3.5 on.
 */
final class PySparkClients {
  private PySparkClients() {}

  static List<PySparkClient> all() {
    return List.of(
        PySparkClient.thin("4.2.0"),
        PySparkClient.full("3.5.9"),
        PySparkClient.full("4.0.5"),
        PySparkClient.full("4.1.4"),
        PySparkClient.full("4.3.0"));
  }
}
