package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;

/**
 * The Prometheus endpoint: plain HTTP, GET {@code path} answers with every meter in Prometheus's text format.
 * It shows counts and names of rules, never tokens, principals or request contents, but it is still meant
 * for the monitoring network only, so it listens on the loopback interface unless told otherwise.
 *
 * @param enabled false when the configuration has no metrics section
 * @param port 0 picks a free port (tests)
 */
public record MetricsConfig(boolean enabled, String address, int port, String path) {

  public static final int DEFAULT_PORT = 9464;

  public static MetricsConfig disabled() {
    return new MetricsConfig(false, "127.0.0.1", DEFAULT_PORT, "/metrics");
  }

  static MetricsConfig read(YamlNode node) {
    node.allowOnly("address", "port", "path");
    String path = node.string("path", "/metrics");
    if (!path.startsWith("/") || path.contains("?") || path.contains("#") || path.contains(" ")) {
      throw node.errorAt(
          "path", "must be an absolute URL path such as /metrics, got '" + path + "'");
    }
    return new MetricsConfig(
        true,
        node.string("address", "127.0.0.1"),
        node.integer("port", DEFAULT_PORT, 0, 65535),
        path);
  }
}
