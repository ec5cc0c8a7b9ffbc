package io.sparkgate.compat;

import java.util.List;
import java.util.Optional;

/**
 * One real Spark Connect client at one version (the JVM client 4.1.1, pyspark-client 4.3.0, the Go client
 * ...), driven as a separate process through the proxy.
 */
interface ClientUnderTest {
  /** E.g. {@code "pyspark-client 4.1.1"}: a column of the README's compatibility table. */
  String name();

  /** The Spark version the client was built for ({@code "4.1.1"}); the Go client says its module version. */
  String version();

  /**
   * Empty when this machine can run the client; otherwise why not (no Go toolchain, no Python venv
   * support). The suite skips the client with that reason, except under CI ({@code SPARKGATE_CI=1}), where
   * it fails.
   */
  Optional<String> unavailable();

  /**
   * Whether Spark itself supports this client against a server of {@code serverVersion}: by default a client
   * works with servers of its own major version, and 3.5 clients with 4.x servers; a 4.x client cannot drive a
   * 3.5 server. Pairs Spark does not support get one quick direct probe and are reported as such, never run
   * through the proxy. A client whose {@link #version()} is not a Spark version (Go's module version)
   * overrides this.
   */
  default boolean supportedBySpark(String serverVersion) {
    return SparkVersions.supported(version(), serverVersion);
  }

  /** Runs the scenarios, in order, in one client session where the client allows it. */
  List<Outcome> run(Target target, List<Scenario> scenarios) throws Exception;
}
