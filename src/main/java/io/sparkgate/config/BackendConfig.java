package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.util.Optional;

/**
 * The plaintext Spark Connect server behind the proxy.
 *
 * @param profile how the backend's profile (version, extensions, catalogs) is read and overridden
 * @param token sent as {@code authorization: Bearer} to servers started with
 *     {@code spark.connect.authenticate.token}; clients never see it
 */
public record BackendConfig(
    String host, int port, Optional<Secret> token, BackendProfileConfig profile) {

  public BackendConfig(String host, int port, Optional<Secret> token) {
    this(host, port, token, BackendProfileConfig.defaults());
  }

  static BackendConfig read(YamlNode node) {
    node.allowOnly("address", "token", "token_file", "profile");
    String address =
        node.requiredString(
            "address", "host:port of the Spark Connect server, e.g. localhost:15002");
    int colon = address.lastIndexOf(':');
    if (colon <= 0 || colon == address.length() - 1) {
      throw node.errorAt("address", "must be host:port, got '" + address + "'");
    }
    String host = address.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(address.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw node.errorAt(
          "address", "port must be a number, got '" + address.substring(colon + 1) + "'");
    }
    if (port < 1 || port > 65535) {
      throw node.errorAt("address", "port must be between 1 and 65535, got " + port);
    }
    if (node.has("token") && node.has("token_file")) {
      throw node.error("set token or token_file, not both");
    }
    Optional<Secret> token = node.optionalString("token").map(Secret::new);
    if (token.isEmpty()) {
      token = node.existingFile("token_file").map(p -> new Secret(readFirstLine(node, p)));
    }
    BackendProfileConfig profile =
        node.has("profile")
            ? BackendProfileConfig.read(node.section("profile"))
            : BackendProfileConfig.defaults();
    return new BackendConfig(host, port, token, profile);
  }

  public String address() {
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
  }

  private static String readFirstLine(YamlNode node, java.nio.file.Path file) {
    try {
      String text = java.nio.file.Files.readString(file).strip();
      if (text.isEmpty() || text.contains("\n")) {
        throw node.errorAt("token_file", file + " must hold exactly one line, the token");
      }
      return text;
    } catch (java.io.IOException e) {
      throw node.errorAt("token_file", "cannot read " + file + ": " + e.getMessage());
    }
  }
}
