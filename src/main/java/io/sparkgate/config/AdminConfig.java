package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The admin listener: plain HTTP (or HTTPS with client certificates) serving health, readiness, metrics, the
 * admin API and the console. Health and readiness answer anyone (probes cannot present credentials, and they
 * show only check names and pass/fail); everything else needs the bearer token or a client certificate when
 * one is configured, and one must be as soon as the listener is bound beyond loopback. {@code metrics:} is
 * accepted as an alias of {@code admin:}, so files written before it keep working.
 *
 * @param enabled false when the configuration has neither an admin nor a metrics section
 * @param port 0 picks a free port (tests)
 * @param metricsPath where the Prometheus scrape is served
 * @param token the bearer token the API, metrics and console ask for, when set
 * @param tls HTTPS on the admin port; with a client CA, a client certificate authenticates the operator
 */
public record AdminConfig(
    boolean enabled,
    String address,
    int port,
    String metricsPath,
    Optional<Secret> token,
    Optional<TlsConfig> tls) {

  public static final int DEFAULT_PORT = 9464;

  public static AdminConfig disabled() {
    return new AdminConfig(
        false, "127.0.0.1", DEFAULT_PORT, "/metrics", Optional.empty(), Optional.empty());
  }

  /** Whether requests beyond health and readiness must authenticate. */
  public boolean requiresCredentials() {
    return token.isPresent() || tls.flatMap(TlsConfig::clientCaFile).isPresent();
  }

  /** Reads {@code admin:}, or {@code metrics:} under its old name ({@code section} says which). */
  static AdminConfig read(YamlNode node, String section) {
    node.allowOnly("address", "port", "path", "token_file", "tls");
    String path = node.string("path", "/metrics");
    if (!path.startsWith("/") || path.contains("?") || path.contains("#") || path.contains(" ")) {
      throw node.errorAt(
          "path", "must be an absolute URL path such as /metrics, got '" + path + "'");
    }
    if (path.equals("/healthz")
        || path.equals("/readyz")
        || path.equals("/")
        || path.startsWith("/api/")
        || path.startsWith("/console/")) {
      throw node.errorAt("path", path + " is taken by the admin listener itself; use /metrics");
    }
    String address = node.string("address", "127.0.0.1");
    Optional<Secret> token =
        node.existingFile("token_file").map(p -> Secret.readFile(node, "token_file", p));
    Optional<TlsConfig> tls =
        node.has("tls") ? Optional.of(TlsConfig.read(node.section("tls"))) : Optional.empty();
    AdminConfig admin =
        new AdminConfig(
            true, address, node.integer("port", DEFAULT_PORT, 0, 65535), path, token, tls);
    if (!admin.requiresCredentials() && !loopback(address)) {
      throw node.errorAt(
          "address",
          "is "
              + address
              + ", beyond loopback: anyone who reaches it could read the proxy's state and act"
              + " on sessions; set "
              + section
              + ".token_file (a bearer token) or "
              + section
              + ".tls.client_ca_file (client certificates), or bind 127.0.0.1");
    }
    return admin;
  }

  private static boolean loopback(String address) {
    try {
      return InetAddress.getByName(address).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false; // a name we cannot resolve now is not known to be loopback
    }
  }

  /** The CA that operators' client certificates must chain to, when they authenticate that way. */
  public Optional<Path> clientCaFile() {
    return tls.flatMap(TlsConfig::clientCaFile);
  }
}
