package io.sparkgate.auth;

import java.util.List;
import java.util.regex.Pattern;

/** Spark conf keys whose values never reach a client: globs where {@code *} matches anything, any case. */
final class SecretPatterns {
  /** What Spark itself shows for redacted values, so users recognise it. */
  static final String REDACTED = "*********(redacted)";

  private final Pattern pattern;

  SecretPatterns(List<String> globs) {
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

  boolean isSecret(String key) {
    return pattern.matcher(key.strip()).matches();
  }
}
