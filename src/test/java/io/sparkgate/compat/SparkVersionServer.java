package io.sparkgate.compat;

import java.nio.file.Path;
import java.util.Optional;

/**
 * One Spark Connect server version the suite runs clients against, however it is obtained (Maven artifacts,
 * the jars of a {@code pyspark} wheel). The suite starts one at a time, shares it across every client, and
 * stops it before the next.
 */
interface SparkVersionServer {

  /** The Spark version, e.g. {@code "4.2.0"}: a row of the README's compatibility table. */
  String version();

  /**
   * Empty when this machine can start the server; otherwise why not (its classpath was not resolved, no
   * Python to build the wheel's environment). Skipped with the reason, except under CI, where it fails.
   */
  Optional<String> unavailable();

  /**
   * Starts the server, plaintext on a free loopback port, with {@link CompatServers#SHARED_CONF} (short
   * result streams, so a large result needs ReattachExecute) on top of its own configuration.
   */
  Running start(Path workDir) throws Exception;

  /** A started server; {@link #close} stops it. */
  interface Running extends AutoCloseable {
    int port();

    /** The version the server itself reported when it became ready. */
    String reportedVersion();

    /** Times a client resumed a result stream with ReattachExecute so far, from the server's log. */
    long reattachCount();

    /** The last lines of the server's log, for failure messages. */
    String logTail();

    @Override
    void close();
  }
}
