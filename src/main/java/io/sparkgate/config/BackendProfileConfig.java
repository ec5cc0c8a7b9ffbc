package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code backend.profile}: how often the proxy re-reads what the backend is (Spark version, extensions,
 * catalogs), and values that override what it reports. With both {@code extensions} and {@code catalogs}
 * set, the profile is known from the start even while the backend is down.
 */
public record BackendProfileConfig(
    Duration refreshInterval,
    Optional<String> sparkVersion,
    Optional<List<String>> extensions,
    Optional<Map<String, String>> catalogs,
    Optional<String> defaultCatalog,
    Optional<String> defaultFs) {

  public static BackendProfileConfig defaults() {
    return new BackendProfileConfig(
        Duration.ofMinutes(5),
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        Optional.empty());
  }

  static BackendProfileConfig read(YamlNode node) {
    node.allowOnly(
        "refresh_interval",
        "spark_version",
        "extensions",
        "catalogs",
        "default_catalog",
        "default_fs");
    return new BackendProfileConfig(
        node.duration(
            "refresh_interval", Duration.ofMinutes(5), Duration.ofSeconds(1), Duration.ofDays(1)),
        node.optionalString("spark_version"),
        node.has("extensions") ? Optional.of(node.stringList("extensions")) : Optional.empty(),
        node.has("catalogs") ? Optional.of(node.stringMap("catalogs")) : Optional.empty(),
        node.optionalString("default_catalog"),
        node.optionalString("default_fs"));
  }
}
