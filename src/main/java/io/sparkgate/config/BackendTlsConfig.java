package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * How the proxy reaches a backend over TLS. The backend's certificate is always verified, by chain and by
 * name: there is no switch to turn that off, since a TLS connection to an unverified peer protects the
 * backend token and the queries from nobody who can sit in the middle.
 *
 * @param caFile PEM CA bundle the backend's certificate must chain to; empty means the JVM's default trust
 *     store (for a backend with a publicly trusted certificate)
 * @param certFile PEM client certificate chain, leaf first, for a backend that requires mutual TLS; set
 *     together with {@code keyFile}
 * @param keyFile the client certificate's PEM PKCS#8 private key, readable by its owner only
 * @param serverName the name the backend's certificate must carry, also sent as SNI; by default the host of
 *     the backend's address
 * @param reloadInterval how often the files are checked for changes (picked up by new connections)
 */
public record BackendTlsConfig(
    Optional<Path> caFile,
    Optional<Path> certFile,
    Optional<Path> keyFile,
    String serverName,
    Duration reloadInterval) {

  public static final Duration DEFAULT_RELOAD_INTERVAL = Duration.ofMinutes(1);

  /** A DNS name (letters, digits, hyphens, dots; a leading wildcard is a certificate's, not a name's). */
  private static final Pattern HOST_NAME =
      Pattern.compile(
          "(?i)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\\.?");

  /** The {@code tls} mapping of a backend whose address has host {@code host}. */
  static BackendTlsConfig read(YamlNode node, String host) {
    node.allowOnly("ca_file", "cert_file", "key_file", "server_name", "reload_interval");
    if (node.has("cert_file") != node.has("key_file")) {
      String missing = node.has("cert_file") ? "key_file" : "cert_file";
      throw node.error(
          "cert_file and key_file go together (the client certificate the backend may require, and its"
              + " private key): set "
              + missing
              + " too, or neither");
    }
    Optional<Path> key = node.existingFile("key_file");
    key.ifPresent(k -> PrivateKeyFile.check(node, "key_file", k));
    String serverName = node.optionalString("server_name").orElse(host);
    if (node.has("server_name")) checkServerName(node, serverName);
    return new BackendTlsConfig(
        node.existingFile("ca_file"),
        node.existingFile("cert_file"),
        key,
        serverName,
        node.duration(
            "reload_interval",
            DEFAULT_RELOAD_INTERVAL,
            Duration.ofMillis(100),
            Duration.ofDays(1)));
  }

  private static void checkServerName(YamlNode node, String name) {
    if (HOST_NAME.matcher(name).matches() || isIpv6Literal(name)) return;
    throw node.errorAt(
        "server_name",
        "must be a host name or IP address that the backend's certificate names, without a port, got '"
            + name
            + "'");
  }

  private static boolean isIpv6Literal(String name) {
    if (!name.matches("[0-9a-fA-F:.]*:[0-9a-fA-F:.]*")) return false; // IPv4 passes as a host name
    try {
      InetAddress.getByName(name); // with a colon: parsed as an IPv6 literal, never looked up
      return true;
    } catch (UnknownHostException e) {
      return false;
    }
  }

  /** Whether the backend's certificate proves the proxy's own (mutual TLS). */
  public boolean clientCertificate() {
    return certFile.isPresent();
  }
}
