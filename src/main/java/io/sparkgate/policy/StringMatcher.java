package io.sparkgate.policy;

import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * A test on one string value: a glob ({@code *} any run, {@code ?} one character; case-insensitive, because
 * Spark matches most names case-insensitively and a policy must not be bypassed by case), a regex (full
 * match, case-sensitive unless written with {@code (?i)}), or a list of these (any of them).
 */
interface StringMatcher {
  boolean matches(String value);

  static StringMatcher glob(String glob) {
    StringBuilder re = new StringBuilder();
    for (char c : glob.toCharArray()) {
      switch (c) {
        case '*' -> re.append(".*");
        case '?' -> re.append('.');
        default -> re.append(Pattern.quote(String.valueOf(c)));
      }
    }
    Pattern p = Pattern.compile(re.toString(), Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE | Pattern.DOTALL);
    boolean literal = glob.indexOf('*') < 0 && glob.indexOf('?') < 0;
    String lower = glob.toLowerCase(Locale.ROOT);
    return literal ? v -> v != null && v.toLowerCase(Locale.ROOT).equals(lower) : v -> v != null && p.matcher(v).matches();
  }

  static StringMatcher regex(Pattern p) {
    return v -> v != null && p.matcher(v).matches();
  }

  static StringMatcher anyOf(List<StringMatcher> matchers) {
    List<StringMatcher> copy = List.copyOf(matchers);
    return v -> {
      for (StringMatcher m : copy) if (m.matches(v)) return true;
      return false;
    };
  }
}
