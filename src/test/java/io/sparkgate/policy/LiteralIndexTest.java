package io.sparkgate.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.BitSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

final class LiteralIndexTest {
  /** Characters whose case is not a simple one-to-one mapping: dotted and dotless i, Kelvin, long s, sigmas, sharp s. */
  private static final String TRICKY = "Iiİı\u212AKkſSsßẞΣσς";

  @Test
  void foldIsWhatTheRegexComparesAndStaysOneCharacter() {
    for (int c = Character.MIN_CODE_POINT; c <= Character.MAX_CODE_POINT; c++) {
      int folded = Character.toLowerCase(Character.toUpperCase(c));
      assertEquals(folded, Character.toLowerCase(Character.toUpperCase(folded)), "idempotent " + c);
      assertEquals(Character.isBmpCodePoint(c), Character.isBmpCodePoint(folded), "plane of " + c);
      if (Character.isBmpCodePoint(c)) {
        assertEquals(
            Character.isSurrogate((char) c),
            Character.isSurrogate((char) folded),
            "surrogate " + c);
        assertEquals(folded, LiteralIndex.fold((char) c));
      }
    }
  }

  @Test
  void findsTheRulesOfEveryValueAndPrefixAValueMayMatch() {
    LiteralIndex index = new LiteralIndex();
    assertTrue(index.isEmpty());
    index.add(new StringMatcher.Literals(Set.of("reflect", "java_method"), Set.of()), 0);
    index.add(new StringMatcher.Literals(Set.of(), Set.of("spark.sql.legacy.", "spark.")), 1);
    index.add(new StringMatcher.Literals(Set.of("Spark.SQL.Legacy.x"), Set.of("hoodie.")), 2);
    assertFalse(index.isEmpty());
    assertEquals(Set.of(0), found(index, "REFLECT"));
    assertEquals(Set.of(), found(index, "reflection"));
    assertEquals(Set.of(1), found(index, "spark.sql.legacy.foo"));
    assertEquals(Set.of(1, 2), found(index, "SPARK.SQL.LEGACY.X"));
    assertEquals(Set.of(1), found(index, "spark."));
    assertEquals(Set.of(), found(index, "spark"));
    assertEquals(Set.of(), found(index, null));
    assertEquals(Set.of(), found(index, ""));
  }

  /** Whatever a glob matches, the index finds, for globs and values made of characters with odd cases. */
  @Test
  void neverMissesWhatAGlobMatches() {
    for (char a : TRICKY.toCharArray()) {
      for (char b : TRICKY.toCharArray()) {
        for (String glob : List.of(a + "" + b, a + "" + b + "*", a + "?*", a + "x*" + b)) {
          StringMatcher m = StringMatcher.glob(glob, true);
          LiteralIndex index = new LiteralIndex();
          index.add(m.literals(), 7);
          for (char c : TRICKY.toCharArray()) {
            for (char d : TRICKY.toCharArray()) {
              for (String value :
                  List.of(c + "" + d, c + "" + d + "tail", c + "x" + d, String.valueOf(c))) {
                if (m.matches(value))
                  assertEquals(Set.of(7), found(index, value), glob + " ~ " + value);
              }
            }
          }
        }
      }
    }
  }

  @Test
  void literalsOfGlobsAndLists() {
    assertEquals(
        new StringMatcher.Literals(Set.of("Reflect"), Set.of()),
        StringMatcher.glob("Reflect", true).literals());
    assertEquals(
        new StringMatcher.Literals(Set.of(), Set.of("a")),
        StringMatcher.glob("a*b?", true).literals());
    assertEquals(
        new StringMatcher.Literals(Set.of(), Set.of("ab")),
        StringMatcher.glob("ab?", true).literals());
    assertNull(StringMatcher.glob("*..*", true).literals());
    assertNull(StringMatcher.glob("?a", true).literals());
    assertEquals(
        new StringMatcher.Literals(Set.of(), Set.of("x")),
        StringMatcher.glob("x\uD83D\uDE00*", true).literals());
    assertNull(StringMatcher.glob("\uD83D\uDE00*", true).literals());
    assertEquals(
        new StringMatcher.Literals(Set.of("\uD83D\uDE00"), Set.of()),
        StringMatcher.glob("\uD83D\uDE00", true).literals());
    assertEquals(
        new StringMatcher.Literals(Set.of("a"), Set.of("b")),
        StringMatcher.anyOf(
                List.of(StringMatcher.glob("a", true), StringMatcher.glob("b*", true)), true)
            .literals());
    assertNull(
        StringMatcher.anyOf(
                List.of(StringMatcher.glob("a", true), StringMatcher.glob("*b", true)), true)
            .literals());
    assertNull(StringMatcher.regex(java.util.regex.Pattern.compile("a")).literals());
  }

  private static Set<Integer> found(LiteralIndex index, String value) {
    BitSet out = new BitSet();
    index.collect(value, out);
    return Set.copyOf(out.stream().boxed().toList());
  }
}
