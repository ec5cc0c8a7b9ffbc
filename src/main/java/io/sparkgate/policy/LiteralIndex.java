package io.sparkgate.policy;

import java.util.BitSet;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Rule numbers filed under the {@link StringMatcher.Literals} of their matchers, so that one lookup per value
 * finds every rule whose matcher may match it, however many rules there are: a hash of the literal values and
 * a trie of the literal prefixes. It finds a superset (the prefix of {@code a*b} is {@code a}), so the rules
 * found are still evaluated; it must never miss one.
 */
final class LiteralIndex {
  private final Map<String, BitSet> values = new HashMap<>();
  private final Node prefixes = new Node();

  void add(StringMatcher.Literals literals, int rule) {
    // Lower-cased as a literal glob compares: the whole string at once.
    for (String v : literals.values())
      values.computeIfAbsent(v.toLowerCase(Locale.ROOT), k -> new BitSet()).set(rule);
    for (String p : literals.prefixes()) {
      Node n = prefixes;
      for (int i = 0; i < p.length(); i++)
        n = n.children.computeIfAbsent(fold(p.charAt(i)), c -> new Node());
      n.rules.set(rule);
    }
  }

  boolean isEmpty() {
    return values.isEmpty() && prefixes.children.isEmpty();
  }

  /** Adds to {@code into} the rules with a literal {@code value} may match; none for null (a missing attribute). */
  void collect(String value, BitSet into) {
    if (value == null) return;
    if (!values.isEmpty()) {
      BitSet exact = values.get(value.toLowerCase(Locale.ROOT));
      if (exact != null) into.or(exact);
    }
    Node n = prefixes;
    for (int i = 0; i < value.length(); i++) {
      n = n.children.get(fold(value.charAt(i)));
      if (n == null) return;
      into.or(n.rules);
    }
  }

  /**
   * A character's case folded as java.util.regex folds it under CASE_INSENSITIVE | UNICODE_CASE, the flags of
   * a glob's regex: that regex takes a value character as equal to a pattern character only if both fold to
   * the same character, so a value it matches starts with its literal prefix once both are folded. Folding
   * the whole string instead (toLowerCase) would differ: "İ" lower-cases to two characters, and would be missed.
   * That a fold is a BMP character and folds to itself is checked for every character by LiteralIndexTest.
   */
  static char fold(char c) {
    return (char) Character.toLowerCase(Character.toUpperCase((int) c));
  }

  private static final class Node {
    final Map<Character, Node> children = new HashMap<>();
    final BitSet rules = new BitSet();
  }
}
