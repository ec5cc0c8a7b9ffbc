package io.sparkgate.e2e;

import io.sparkgate.config.ProxyConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;

/**
 * Proxy configurations for the end-to-end tests, written as YAML and loaded the way operators' files are, so
 * the tests go through the same validation; each in a fresh directory under target/e2e.
 */
final class ProxyConfigs {
  private ProxyConfigs() {}

  /** A fresh, absolute working directory for one test class. */
  static Path freshDir(String name) throws IOException {
    return Files.createDirectories(Path.of("target", "e2e", name + "-" + UUID.randomUUID()))
        .toAbsolutePath();
  }

  /** The explicit opt-in to no credentials that a file without another auth method must carry. */
  static final String ANONYMOUS = "auth: {anonymous: true}";

  /**
   * Writes {@code lines} as {@code sparkgate.yaml} in {@code dir} and loads it. Lines without an {@code auth}
   * section get {@link #ANONYMOUS}: most of these tests are about something else, and a file must say who may
   * connect.
   */
  static ProxyConfig write(Path dir, String... lines) throws IOException {
    Path file = dir.resolve("sparkgate.yaml");
    String text = String.join("\n", lines) + "\n";
    if (!text.startsWith("auth:") && !text.contains("\nauth:")) text += ANONYMOUS + "\n";
    Files.writeString(file, text);
    return ProxyConfig.load(file);
  }

  /** A plaintext listener on a free loopback port (TLS is covered by ProxyIT and AuthIT). */
  static final String PLAINTEXT_LISTENER = "listen: {address: 127.0.0.1, port: 0, plaintext: true}";

  static String backend(int port) {
    return "backend: {address: '127.0.0.1:" + port + "'}";
  }

  /** Closes a test class's client session and proxy, in that order, skipping what never started. */
  static void closeAll(AutoCloseable... resources) throws Exception {
    for (AutoCloseable r : resources) {
      if (r != null) {
        r.close();
      }
    }
  }

  /** The YAML line pointing the proxy at a shipped policy file under policies/. */
  static String policy(String name) {
    return "policy: {file: '" + Path.of("policies", name).toAbsolutePath() + "'}";
  }
}
