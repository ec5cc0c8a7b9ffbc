package io.sparkgate.engine;

import java.io.IOException;
import java.nio.file.Path;

/** Starts one engine process; {@link SparkSubmit} in production, a fake in unit tests. */
interface Launcher {
  /**
   * What one engine is started with.
   *
   * @param appName the Spark application's name (its key, for the cluster manager's UI)
   * @param proxyUser the user Spark impersonates ({@code --proxy-user}), or null
   * @param log where the process's output goes
   */
  record Spec(
      String appName, String bindAddress, int port, String token, String proxyUser, Path log) {}

  /** Starts the process; returns at once, before it serves. */
  Process launch(Spec spec) throws IOException;
}
