package io.sparkgate.config;

import java.util.Objects;

/** A credential from configuration; {@link #toString()} never reveals it, so it cannot leak into logs. */
public final class Secret {
  private final String value;

  public Secret(String value) {
    this.value = Objects.requireNonNull(value, "value");
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
