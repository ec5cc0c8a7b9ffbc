package io.sparkgate.config;

import java.util.List;

/**
 * Spark conf keys whose values never reach a client ({@code auth.secret_patterns}): {@link Glob#anyCase}
 * globs. Config answers are redacted with them, and the policy's CONFIG_READ facts carry {@code secret=true}
 * for the keys they match. Any case, although Spark compares keys exactly: a pattern names a family of keys
 * ({@code *password*}) that whoever set one may have spelt in any case, and matching more keys only redacts
 * or refuses more.
 */
public final class SecretPatterns {
  /** What Spark itself shows for redacted values, so users recognise it. */
  public static final String REDACTED = "*********(redacted)";

  private final List<Glob> globs;

  public SecretPatterns(List<String> globs) {
    this.globs = globs.stream().map(Glob::anyCase).toList();
  }

  public boolean isSecret(String key) {
    String stripped = key.strip();
    for (Glob g : globs) {
      if (g.matches(stripped)) return true;
    }
    return false;
  }
}
