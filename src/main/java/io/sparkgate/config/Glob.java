package io.sparkgate.config;

/**
 * A glob over a whole string, and the only glob matcher in Sparkgate: {@code *} matches any run of characters
 * (none too), {@code ?} exactly one, every other character only itself. There is no escape and no regex, so a
 * pattern cannot inject one: {@code a.b}, {@code (x)} and a backslash are plain text.
 *
 * <p>{@link #exact} compares characters as they are: identities (principals, groups, tenants) are what the
 * identity provider states, and {@code Alice} is not {@code alice}. {@link #anyCase} folds each character as
 * {@code toLowerCase(toUpperCase(c))}, the fold {@code java.util.regex} uses under {@code UNICODE_CASE}: for
 * names whose case does not matter to whoever reads them (host names, most SQL names, families of secret
 * keys). Characters are code points: {@code ?} takes a whole surrogate pair. Matching allocates nothing, as
 * it runs on every call.
 */
public final class Glob {
  private static final int ANY_RUN = -1;
  private static final int ANY_ONE = -2;

  private final String pattern;
  private final boolean anyCase;

  /** The pattern's code points (folded in any case), {@link #ANY_RUN} and {@link #ANY_ONE} for wildcards. */
  private final int[] tokens;

  private Glob(String pattern, boolean anyCase) {
    this.pattern = pattern;
    this.anyCase = anyCase;
    this.tokens =
        pattern
            .codePoints()
            .map(c -> c == '*' ? ANY_RUN : c == '?' ? ANY_ONE : anyCase ? fold(c) : c)
            .toArray();
  }

  /** Case as written: for identities. */
  public static Glob exact(String pattern) {
    return new Glob(pattern, false);
  }

  /** Case ignored, character by character. */
  public static Glob anyCase(String pattern) {
    return new Glob(pattern, true);
  }

  /** Whether the pattern is a lone {@code *}: it matches every string. */
  public boolean matchesEverything() {
    return tokens.length == 1 && tokens[0] == ANY_RUN;
  }

  /** Whether the whole of {@code value} matches; a missing (null) value never does. */
  public boolean matches(String value) {
    if (value == null) return false;
    int pi = 0;
    int vi = 0;
    int afterStar = -1; // the token after the last '*' seen, to fall back to
    int resume = 0; // where in value that '*' stopped taking characters
    while (vi < value.length()) {
      int c = value.codePointAt(vi);
      if (pi < tokens.length && tokens[pi] == ANY_RUN) {
        afterStar = ++pi;
        resume = vi;
      } else if (pi < tokens.length && (tokens[pi] == ANY_ONE || same(tokens[pi], c))) {
        pi++;
        vi += Character.charCount(c);
      } else if (afterStar >= 0) {
        // The last '*' takes one more character and the rest of the pattern tries again from there.
        pi = afterStar;
        resume += Character.charCount(value.codePointAt(resume));
        vi = resume;
      } else {
        return false;
      }
    }
    while (pi < tokens.length && tokens[pi] == ANY_RUN) pi++;
    return pi == tokens.length;
  }

  /** Whether the pattern has a wildcard; without one it matches one string (in any case, its variants). */
  public boolean hasWildcards() {
    return hasWildcards(pattern);
  }

  /**
   * Whether {@code text}, read as a glob, has a wildcard: for a check on the request path (is this name one
   * literal?) that must not build a glob to ask.
   */
  public static boolean hasWildcards(String text) {
    return literalEnd(text) < text.length();
  }

  /** The text before the first wildcard: each value the glob matches starts with it (in any case: folded). */
  public String literalPrefix() {
    return pattern.substring(0, literalEnd(pattern));
  }

  private static int literalEnd(String text) {
    int end = 0;
    while (end < text.length() && text.charAt(end) != '*' && text.charAt(end) != '?') end++;
    return end;
  }

  public String pattern() {
    return pattern;
  }

  private boolean same(int token, int c) {
    return token == c || anyCase && token == fold(c);
  }

  private static int fold(int c) {
    return Character.toLowerCase(Character.toUpperCase(c));
  }

  @Override
  public String toString() {
    return pattern;
  }
}
