package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/** A credential from configuration; {@link #toString()} never reveals it, so it cannot leak into logs. */
public final class Secret {
  private final String value;

  public Secret(String value) {
    this.value = Objects.requireNonNull(value, "value");
  }

  /** The one line of a file named by {@code key} of {@code node} (token_file, redis_password_file ...). */
  static Secret readFile(YamlNode node, String key, Path file) {
    try {
      String text = Files.readString(file).strip();
      if (text.isEmpty() || text.contains("\n")) {
        throw node.errorAt(key, file + " must hold exactly one line, the secret");
      }
      return new Secret(text);
    } catch (IOException e) {
      throw node.errorAt(key, "cannot read " + file + ": " + e.getMessage());
    }
  }

  /** The secret itself, for the one place that must send it. */
  public String reveal() {
    return value;
  }

  @Override
  public String toString() {
    return "****";
  }
}
