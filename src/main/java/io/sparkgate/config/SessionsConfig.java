package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

/**
 * Where session placements (which backend holds which session) and shared quota counts are kept
 * ({@code sessions:}).
 *
 * @param redisUrl {@code redis://host:port/db} or {@code rediss://} (TLS); present with {@code store: redis}
 * @param redisPassword from {@code redis_password_file}; never in the URL
 * @param redisTimeout how long one Redis command may take before the call it serves is answered UNAVAILABLE
 * @param idleTimeout a placement unused this long is forgotten
 */
public record SessionsConfig(
    Store store,
    Optional<URI> redisUrl,
    Optional<Secret> redisPassword,
    Duration redisTimeout,
    Duration idleTimeout) {

  /** Memory: one replica; redis: every replica shares placements and quota counts. */
  public enum Store {
    MEMORY,
    REDIS
  }

  public static SessionsConfig memory() {
    return new SessionsConfig(
        Store.MEMORY,
        Optional.empty(),
        Optional.empty(),
        Duration.ofMillis(500),
        Duration.ofHours(1));
  }

  static SessionsConfig read(YamlNode node) {
    node.allowOnly("store", "redis_url", "redis_password_file", "redis_timeout", "idle_timeout");
    String store = node.string("store", "memory").toLowerCase(Locale.ROOT);
    Store kind =
        switch (store) {
          case "memory" -> Store.MEMORY;
          case "redis" -> Store.REDIS;
          default -> throw node.errorAt("store", "must be memory or redis, got '" + store + "'");
        };
    Optional<URI> url = Optional.empty();
    Optional<Secret> password = Optional.empty();
    if (kind == Store.REDIS) {
      String text =
          node.requiredString("redis_url", "with store: redis, e.g. redis://127.0.0.1:6379/0");
      URI uri;
      try {
        uri = new URI(text);
      } catch (URISyntaxException e) {
        throw node.errorAt("redis_url", "is not a URL: " + e.getMessage());
      }
      if (!"redis".equals(uri.getScheme()) && !"rediss".equals(uri.getScheme())) {
        throw node.errorAt("redis_url", "must start with redis:// or rediss:// (TLS)");
      }
      if (uri.getHost() == null) {
        throw node.errorAt("redis_url", "names no host: redis://host:port/db");
      }
      if (uri.getUserInfo() != null) {
        throw node.errorAt(
            "redis_url",
            "must not hold a password (it would be logged with the URL): use redis_password_file");
      }
      url = Optional.of(uri);
      password =
          node.existingFile("redis_password_file")
              .map(f -> Secret.readFile(node, "redis_password_file", f));
    } else if (node.has("redis_url") || node.has("redis_password_file")) {
      throw node.errorAt(
          "store", "is memory, so redis_url and redis_password_file do nothing: set store: redis");
    }
    return new SessionsConfig(
        kind,
        url,
        password,
        node.duration(
            "redis_timeout", Duration.ofMillis(500), Duration.ofMillis(10), Duration.ofSeconds(30)),
        node.duration(
            "idle_timeout", Duration.ofHours(1), Duration.ofMinutes(1), Duration.ofDays(30)));
  }
}
