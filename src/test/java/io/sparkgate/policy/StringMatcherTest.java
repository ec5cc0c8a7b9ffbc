package io.sparkgate.policy;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
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
}
