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
 */
public record PolicyConfig(Optional<Path> file, String defaultEffect, Duration reloadInterval) {

  public static PolicyConfig disabled() {
    return new PolicyConfig(Optional.empty(), "deny", Duration.ofSeconds(5));
  }

  public boolean enabled() {
    return file.isPresent();
  }

  static PolicyConfig read(YamlNode node) {
    node.allowOnly("file", "default_effect", "reload_interval");
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
            "reload_interval",
            Duration.ofSeconds(5),
            Duration.ofMillis(100),
            Duration.ofHours(24)));
  }
}
