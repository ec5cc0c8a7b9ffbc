package io.sparkgate.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

final class StringMatcherTest {

  /** A list of exact names is one set lookup; it must still match exactly as the globs one by one would. */
  @Test
  void anyOf_exactNamesAndPatterns_matchAsEachWould() {
    StringMatcher m =
        StringMatcher.anyOf(
            List.of(
                StringMatcher.glob("abs", true),
                StringMatcher.glob("Upper", true),
                StringMatcher.glob("*.system.expire_snapshots", true),
                StringMatcher.regex(Pattern.compile("[-+*/]+"))),
            true);
    assertTrue(m.matches("ABS"));
    assertTrue(m.matches("upper"));
    assertTrue(m.matches("cat.system.expire_snapshots"));
    assertTrue(m.matches("*"));
    assertFalse(m.matches("abs "), "no trimming");
    assertFalse(m.matches("reflect"));
    assertFalse(m.matches(null), "a missing attribute never matches");
    assertFalse(m.matches(""));
  }

  @Test
  void exactGlobs_matchCaseAsWritten_andKeepTheirLiterals() {
    StringMatcher m =
        StringMatcher.anyOf(
            List.of(
                StringMatcher.glob("spark.sql.shuffle.partitions", false),
                StringMatcher.glob("spark.sql.adaptive.*", false)),
            false);
    assertTrue(m.matches("spark.sql.shuffle.partitions"));
    assertTrue(m.matches("spark.sql.adaptive.enabled"));
    assertTrue(m.matches("spark.sql.adaptive.Enabled"), "the wildcard's part is any text");
    assertFalse(m.matches("Spark.Sql.Shuffle.Partitions"));
    assertFalse(m.matches("SPARK.sql.adaptive.enabled"));
    assertFalse(m.matches(null));
    // Filed as the globs ignoring case: a superset for the index.
    assertTrue(m.literals().values().contains("spark.sql.shuffle.partitions"));
    assertTrue(m.literals().prefixes().contains("spark.sql.adaptive."));
  }

  /**
   * SQL names are matched as before the one {@link io.sparkgate.config.Glob}: as the regex each glob used to
   * become, or (for a handful of characters the regex was inconsistent about, like {@code ß} beside a
   * wildcard, and for characters outside the Basic Multilingual Plane, which it compared by halves) more,
   * never less.
   */
  @Test
  void globs_matchAtLeastWhatTheirOldRegexMatched() {
    for (int c = 0; c <= Character.MAX_CODE_POINT; c++) {
      if (c == '*' || c == '?' || Character.getType(c) == Character.SURROGATE) continue;
      int upper = Character.toUpperCase(c);
      int lower = Character.toLowerCase(c);
      if (upper == c && lower == c) continue;
      String p = Character.toString(c);
      for (int other :
          new int[] {c, upper, lower, Character.toLowerCase(upper), Character.toTitleCase(c)}) {
        String v = Character.toString(other);
        for (String[] g :
            new String[][] {{p + "*", v}, {"*x" + p, "yx" + v}, {"a" + p + "?", "A" + v + "b"}}) {
          if (oldRegex(g[0]).matcher(g[1]).matches())
            assertTrue(StringMatcher.glob(g[0], true).matches(g[1]), g[0] + " ~ " + g[1]);
        }
      }
    }
    Random random = new Random(7);
    String alphabet = "aAbB.*?\\()+[]^$|{}sSß";
    for (int i = 0; i < 20_000; i++) {
      String glob = text(random, alphabet, 6);
      String value = text(random, alphabet.replace("*", "").replace("?", ""), 7);
      if (glob.indexOf('*') < 0 && glob.indexOf('?') < 0) continue;
      assertEquals(
          oldRegex(glob).matcher(value).matches(),
          StringMatcher.glob(glob, true).matches(value),
          glob + " ~ " + value);
    }
  }

  /** What a glob used to become: each character quoted, in any case. */
  private static Pattern oldRegex(String glob) {
    StringBuilder re = new StringBuilder();
    for (char c : glob.toCharArray()) {
      re.append(c == '*' ? ".*" : c == '?' ? "." : Pattern.quote(String.valueOf(c)));
    }
    return Pattern.compile(
        re.toString(), Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE | Pattern.DOTALL);
  }

  private static String text(Random random, String alphabet, int max) {
    StringBuilder out = new StringBuilder();
    for (int n = random.nextInt(max + 1); n > 0; n--)
      out.append(alphabet.charAt(random.nextInt(alphabet.length())));
    return out.toString();
  }
}
