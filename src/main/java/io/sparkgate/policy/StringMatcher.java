package io.sparkgate.policy;

import io.sparkgate.config.Glob;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A test on one string value of a request (an RPC name, a fact's attribute): a {@link Glob} (in any case,
 * because Spark matches most names case-insensitively and a policy must not be bypassed by case, but exact
 * where Spark compares the value exactly: see {@link io.sparkgate.inspect.Fact#caseSensitive}), a regex (full
 * match, case-sensitive unless written with {@code (?i)}), or a list of these (any of them). Who calls is not
 * a value of the request: a rule's principals, groups and tenants are a {@link io.sparkgate.call.MatchBlock}.
 */
interface StringMatcher {
  boolean matches(String value);

  /** What a {@link LiteralIndex} can file this under instead of testing it, or null when it has no literals. */
  default Literals literals() {
    return null;
  }

  /**
   * Literal text of globs: every value the matcher matches is one of {@code values} or starts with one of
   * {@code prefixes}, ignoring case as globs do. Not the converse: {@code a*b} has the prefix {@code a}.
   */
  record Literals(Set<String> values, Set<String> prefixes) {
    public Literals {
      values = Set.copyOf(values);
      prefixes = Set.copyOf(prefixes);
    }
  }

  /**
   * A glob ({@code *} any run of characters, {@code ?} one). With {@code ignoreCase} false, the glob's
   * letters match only themselves. Its literals are the same either way: an exact match is also a match
   * ignoring case, so a {@link LiteralIndex} still finds a superset.
   */
  static StringMatcher glob(String glob, boolean ignoreCase) {
    Glob g = ignoreCase ? Glob.anyCase(glob) : Glob.exact(glob);
    if (!g.hasWildcards()) {
      String lower = glob.toLowerCase(Locale.ROOT);
      return withLiterals(
          ignoreCase
              ? v -> v != null && v.toLowerCase(Locale.ROOT).equals(lower)
              : v -> v != null && v.equals(glob),
          new Literals(Set.of(glob), Set.of()));
    }
    StringMatcher test = g::matches;
    // The prefix stops at a surrogate: LiteralIndex folds case one char at a time, the glob one
    // code
    // point at a time, and the two agree only on the Basic Multilingual Plane.
    String prefix = g.literalPrefix();
    int end = 0;
    while (end < prefix.length() && !Character.isSurrogate(prefix.charAt(end))) {
      end++;
    }
    return end == 0
        ? test
        : withLiterals(test, new Literals(Set.of(), Set.of(prefix.substring(0, end))));
  }

  static StringMatcher regex(Pattern p) {
    return v -> v != null && p.matcher(v).matches();
  }

  /**
   * Any of them; with literals when every one has some. Exact names (globs without wildcards) are looked up
   * in one set, so an allowlist of hundreds of names costs one lookup, not one comparison per name. The
   * matchers must all be made with this {@code ignoreCase}: the exact names are compared the same way.
   */
  static StringMatcher anyOf(List<StringMatcher> matchers, boolean ignoreCase) {
    List<StringMatcher> copy = List.copyOf(matchers);
    Set<String> exact = new HashSet<>();
    List<StringMatcher> others = new java.util.ArrayList<>();
    for (StringMatcher m : copy) {
      Literals l = m.literals();
      if (l != null && l.prefixes().isEmpty() && l.values().size() == 1) {
        String name = l.values().iterator().next();
        exact.add(ignoreCase ? name.toLowerCase(Locale.ROOT) : name);
      } else {
        others.add(m);
      }
    }
    StringMatcher any =
        v -> {
          if (v == null) return false;
          if (!exact.isEmpty() && exact.contains(ignoreCase ? v.toLowerCase(Locale.ROOT) : v))
            return true;
          for (StringMatcher m : others) if (m.matches(v)) return true;
          return false;
        };
    Set<String> values = new HashSet<>();
    Set<String> prefixes = new HashSet<>();
    for (StringMatcher m : copy) {
      if (m.literals() == null) return any;
      values.addAll(m.literals().values());
      prefixes.addAll(m.literals().prefixes());
    }
    return withLiterals(any, new Literals(values, prefixes));
  }

  private static StringMatcher withLiterals(StringMatcher test, Literals literals) {
    return new StringMatcher() {
      @Override
      public boolean matches(String value) {
        return test.matches(value);
      }

      @Override
      public Literals literals() {
        return literals;
      }
    };
  }
}
