package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

/**
 * The policy the proxy enforces ({@code policy} section).
 *
 * @param file the policy YAML (relative to the configuration file); empty when there is no policy section
 * @param defaultEffect {@code deny} or {@code allow}: the decision when no rule matches, unless the policy file
 *     sets its own {@code default}
 * @param reloadInterval how often the file is checked for changes
 * @param maxDecompressedPlanBytes how large a compressed plan (Spark 4.1+, zstd) may inflate before the
 *     inspector stops and reports {@code compressed_plan_too_large}, which the shipped policies refuse
 *     ({@code max_decompressed_plan_bytes}, default 64 MiB; Spark's own bound, spark.connect.maxPlanSize,
 *     is 512 MB)
 * @param opa an Open Policy Agent asked after the local policy allowed ({@code opa}); empty: none
 */
public record PolicyConfig(
    Optional<Path> file,
    String defaultEffect,
    Duration reloadInterval,
    long maxDecompressedPlanBytes,
    Optional<OpaConfig> opa) {

  public static final long DEFAULT_MAX_DECOMPRESSED_PLAN_BYTES = 64L << 20;

  public PolicyConfig(Optional<Path> file, String defaultEffect, Duration reloadInterval) {
    this(
        file, defaultEffect, reloadInterval, DEFAULT_MAX_DECOMPRESSED_PLAN_BYTES, Optional.empty());
  }

  public static PolicyConfig disabled() {
    return new PolicyConfig(Optional.empty(), "deny", Duration.ofSeconds(5));
  }

  public boolean enabled() {
    return file.isPresent();
  }

  static PolicyConfig read(YamlNode node) {
    node.allowOnly(
        "file", "default_effect", "reload_interval", "max_decompressed_plan_bytes", "opa");
    Path file =
        node.existingFile("file")
            .orElseThrow(
                () ->
                    node.errorAt(
                        "file",
                        "is required: the policy YAML, e.g. ../policies/shared-server.yaml"));
    String def = node.string("default_effect", "deny").toLowerCase(Locale.ROOT);
    if (!def.equals("deny") && !def.equals("allow")) {
      throw node.errorAt("default_effect", "must be deny or allow, got '" + def + "'");
    }
    return new PolicyConfig(
        Optional.of(file),
        def,
        node.duration(
            "reload_interval", Duration.ofSeconds(5), Duration.ofMillis(100), Duration.ofHours(24)),
        node.bytes(
            "max_decompressed_plan_bytes", DEFAULT_MAX_DECOMPRESSED_PLAN_BYTES, 1L << 20, 2L << 30),
        node.has("opa") ? Optional.of(OpaConfig.read(node.section("opa"))) : Optional.empty());
  }
}
