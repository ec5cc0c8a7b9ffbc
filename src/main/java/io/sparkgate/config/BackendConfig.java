package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.time.Duration;
import java.util.Optional;

/**
 * A Spark Connect server behind the proxy, reached in plaintext or, with {@code tls}, over verified TLS.
 *
 * @param profile how the backend's profile (version, extensions, catalogs) is read and overridden
 * @param token sent as {@code authorization: Bearer} to servers started with
 *     {@code spark.connect.authenticate.token}; clients never see it
 * @param connectTimeout how long a TCP connection to the server may take to open
 * @param handshakeTimeout how long an open connection may wait for the server's first bytes (its HTTP/2
 *     SETTINGS, after the TLS handshake with {@code tls}): a server that accepts and never answers fails the
 *     calls waiting for it with UNAVAILABLE
 * @param tls present: the server is reached over TLS, verified as it says; empty: plaintext
 */
public record BackendConfig(
    String host,
    int port,
    Optional<Secret> token,
    BackendProfileConfig profile,
    Duration connectTimeout,
    Duration handshakeTimeout,
    Optional<BackendTlsConfig> tls) {

  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
  public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);

  public BackendConfig(
      String host, int port, Optional<Secret> token, BackendProfileConfig profile) {
    this(
        host,
        port,
        token,
        profile,
        DEFAULT_CONNECT_TIMEOUT,
        DEFAULT_HANDSHAKE_TIMEOUT,
        Optional.empty());
  }

  /** One entry of a pool's {@code backends}: {@code "host:port"}, or a mapping like the {@code backend} section. */
  static BackendConfig readEntry(YamlNode node) {
    if (node.isScalar()) {
      return address(node, node.text(), Optional.empty(), BackendProfileConfig.defaults());
    }
    if (!node.isMapping()) {
      throw node.error(
          "must be host:port or a mapping with address (or dns), token_file, profile,"
              + " connect_timeout, handshake_timeout, tls");
    }
    return read(node);
  }

  static BackendConfig read(YamlNode node) {
    node.allowOnly(
        "address", "token", "token_file", "profile", "connect_timeout", "handshake_timeout", "tls");
    String address =
        node.requiredString(
            "address", "host:port of the Spark Connect server, e.g. localhost:15002");
    BackendConfig backend =
        address(node, address, Optional.empty(), BackendProfileConfig.defaults());
    return settings(node, backend.host(), backend.port());
  }

  /** The keys every backend entry shares besides its address: the token, profile, timeouts and tls. */
  static final java.util.List<String> SETTINGS =
      java.util.List.of(
          "token", "token_file", "profile", "connect_timeout", "handshake_timeout", "tls");

  /**
   * A backend at {@code host:port} with the settings of {@code node} ({@link #SETTINGS}); {@code host} is
   * also the default TLS server name.
   */
  static BackendConfig settings(YamlNode node, String host, int port) {
    if (node.has("token") && node.has("token_file")) {
      throw node.error("set token or token_file, not both");
    }
    Optional<Secret> token = node.optionalString("token").map(Secret::new);
    if (token.isEmpty()) {
      token = node.existingFile("token_file").map(p -> Secret.readFile(node, "token_file", p));
    }
    BackendProfileConfig profile =
        node.has("profile")
            ? BackendProfileConfig.read(node.section("profile"))
            : BackendProfileConfig.defaults();
    return new BackendConfig(
        host,
        port,
        token,
        profile,
        node.duration(
            "connect_timeout",
            DEFAULT_CONNECT_TIMEOUT,
            Duration.ofMillis(100),
            Duration.ofMinutes(10)),
        node.duration(
            "handshake_timeout",
            DEFAULT_HANDSHAKE_TIMEOUT,
            Duration.ofMillis(100),
            Duration.ofMinutes(10)),
        tls(node, host));
  }

  /** The same server settings for a backend at another {@code host:port} (one DNS found). */
  public BackendConfig at(String host, int port) {
    return new BackendConfig(host, port, token, profile, connectTimeout, handshakeTimeout, tls);
  }

  private static Optional<BackendTlsConfig> tls(YamlNode node, String host) {
    if (!node.entries().containsKey("tls")) return Optional.empty();
    // A bare "tls:" (its lines commented out, say) must not quietly mean plaintext, nor guess TLS.
    if (!node.has("tls")) {
      throw node.errorAt(
          "tls",
          "is empty: write tls: {} for TLS verified against the JVM's default trust store, set its"
              + " ca_file, or remove it for plaintext");
    }
    return Optional.of(BackendTlsConfig.read(node.section("tls"), host));
  }

  private static BackendConfig address(
      YamlNode node, String address, Optional<Secret> token, BackendProfileConfig profile) {
    int colon = address.lastIndexOf(':');
    if (colon <= 0 || colon == address.length() - 1) {
      throw problem(node, "must be host:port, got '" + address + "'");
    }
    String host = address.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(address.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw problem(node, "port must be a number, got '" + address.substring(colon + 1) + "'");
    }
    if (port < 1 || port > 65535) {
      throw problem(node, "port must be between 1 and 65535, got " + port);
    }
    return new BackendConfig(host, port, token, profile);
  }

  /** An error about the address, whether the entry is the address itself or a mapping holding it. */
  private static RuntimeException problem(YamlNode node, String message) {
    return node.isMapping() ? node.errorAt("address", message) : node.error(message);
  }

  /**
   * Whether the proxy reaches this server in plaintext at an address that may be another machine: its token
   * and every query would cross the network in the clear (literal loopback and {@code localhost} only count
   * as this machine, as for the listener).
   */
  public boolean plaintextBeyondLoopback() {
    return tls.isEmpty() && !ListenConfig.loopback(host);
  }

  public String address() {
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
  }
}
