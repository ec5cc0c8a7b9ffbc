package io.sparkgate.config;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Spark conf keys whose values never reach a client ({@code auth.secret_patterns}): globs where {@code *}
 * matches anything, any case. Config answers are redacted with them, and the policy's CONFIG_READ facts carry
 * {@code secret=true} for the keys they match. Any case, although Spark compares keys exactly: a pattern names
 * a family of keys ({@code *password*}) that whoever set one may have spelt in any case, and matching more
 * keys only redacts or refuses more.
 */
public final class SecretPatterns {
  /** What Spark itself shows for redacted values, so users recognise it. */
  public static final String REDACTED = "*********(redacted)";

  private final Pattern pattern;

  public SecretPatterns(List<String> globs) {
    StringBuilder regex = new StringBuilder();
    for (String glob : globs) {
      if (regex.length() > 0) {
        regex.append('|');
      }
      regex.append("(?:");
      String[] parts = glob.split("\\*", -1);
      for (int i = 0; i < parts.length; i++) {
        if (i > 0) {
          regex.append(".*");
        }
        regex.append(Pattern.quote(parts[i]));
      }
      regex.append(')');
    }
    this.pattern = Pattern.compile(regex.toString(), Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
  }

  public boolean isSecret(String key) {
    return pattern.matcher(key.strip()).matches();
  }
}
