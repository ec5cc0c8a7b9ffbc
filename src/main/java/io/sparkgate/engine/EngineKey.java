package io.sparkgate.engine;

import io.sparkgate.config.EnginesConfig;
import java.util.Locale;
import java.util.Objects;

/**
 * Whose engine: the share level and the name at that level, exactly as the identity provider stated it
 * (principal, first group or tenant). {@link #id()} is how logs, the API and the shared store name it.
 */
record EngineKey(EnginesConfig.Share share, String name) {
  EngineKey {
    Objects.requireNonNull(share, "share");
    Objects.requireNonNull(name, "name");
  }

  /** {@code user:alice}, {@code group:analysts}, {@code tenant:acme}. */
  String id() {
    return share.name().toLowerCase(Locale.ROOT) + ":" + name;
  }

  /** The key {@link #id()} wrote; null for text that is not one. */
  static EngineKey parse(String id) {
    int colon = id == null ? -1 : id.indexOf(':');
    if (colon <= 0 || colon == id.length() - 1) return null;
    try {
      return new EngineKey(
          EnginesConfig.Share.valueOf(id.substring(0, colon).toUpperCase(Locale.ROOT)),
          id.substring(colon + 1));
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  @Override
  public String toString() {
    return id();
  }
}
