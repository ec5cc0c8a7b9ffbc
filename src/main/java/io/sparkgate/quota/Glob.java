package io.sparkgate.quota;

import java.util.List;

/**
 * A glob over a whole string: {@code *} any run of characters, {@code ?} one. Case-insensitive, as the
 * policy's globs are, so that an operator's patterns mean the same in both files. Matching allocates
 * nothing: it runs on every call of a principal that overrides might concern.
 */
final class Glob {
  private final String pattern;

  private Glob(String pattern) {
    this.pattern = pattern;
  }

  static Glob[] all(List<String> patterns) {
    Glob[] out = new Glob[patterns.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = new Glob(patterns.get(i));
    }
    return out;
  }

  /** Whether any of {@code globs} matches {@code value}; none match a null value. */
  static boolean any(Glob[] globs, String value) {
    if (value == null) return false;
    for (Glob g : globs) {
      if (g.matches(value)) return true;
    }
    return false;
  }

  boolean matches(String value) {
    String p = pattern;
    int pi = 0;
    int vi = 0;
    int star = -1; // the last '*' seen, to fall back to
    int resume = 0; // where in value that '*' would next take one more character
    while (vi < value.length()) {
      char c = pi < p.length() ? p.charAt(pi) : 0;
      if (pi < p.length() && c == '*') {
        star = pi++;
        resume = vi;
      } else if (pi < p.length() && (c == '?' || same(c, value.charAt(vi)))) {
        pi++;
        vi++;
      } else if (star >= 0) {
        pi = star + 1;
        vi = ++resume;
      } else {
        return false;
      }
    }
    while (pi < p.length() && p.charAt(pi) == '*') {
      pi++;
    }
    return pi == p.length();
  }

  private static boolean same(char a, char b) {
    return a == b
        || Character.toLowerCase(a) == Character.toLowerCase(b)
        || Character.toUpperCase(a) == Character.toUpperCase(b);
  }

  @Override
  public String toString() {
    return pattern;
  }
}
