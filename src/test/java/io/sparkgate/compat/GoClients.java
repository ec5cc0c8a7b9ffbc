package io.sparkgate.compat;

import java.util.List;

/**
 * The Go clients the compatibility suite runs: the Spark Connect Go client at the version {@code
 * src/test/go/compat/go.mod} requires (the module has no releases; the suite follows the newest version the Go
 * module proxy serves). The harness's client list includes these.
 */
final class GoClients {
  private GoClients() {}

  static List<ClientUnderTest> all() {
    return List.of(new GoClient());
  }
}
