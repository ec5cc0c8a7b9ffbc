package io.sparkgate.policy;

import io.sparkgate.inspect.Fact;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What a request must contain for a condition to be true: a fact that satisfies at least one of the keys. With
 * no keys ({@link #NONE}) nothing is known, and a rule so guarded is evaluated for every request.
 */
record Guard(Set<Key> anyOf) {
  static final Guard NONE = new Guard(Set.of());

  /**
   * A fact of {@code kind}; with {@code literals}, one whose attribute {@code attr} (its subkind when attr is
   * null) may match them.
   */
  record Key(Fact.Kind kind, String attr, StringMatcher.Literals literals) {}

  Guard {
    anyOf = Set.copyOf(anyOf);
  }

  boolean isNone() {
    return anyOf.isEmpty();
  }

  /** The guard of "any of": NONE when one of them is. */
  static Guard union(List<Guard> guards) {
    Set<Key> keys = new HashSet<>();
    for (Guard g : guards) {
      if (g.isNone()) return NONE;
      keys.addAll(g.anyOf);
    }
    return new Guard(keys);
  }

  /**
   * The guard of "all of": any one of theirs; kept is the one with the fewest keys on kind alone, then the
   * fewest keys, the first of equals.
   */
  static Guard strongest(List<Guard> guards) {
    Guard best = NONE;
    for (Guard g : guards) {
      if (!g.isNone() && (best.isNone() || g.weight() < best.weight())) best = g;
    }
    return best;
  }

  private long weight() {
    long kindOnly = anyOf.stream().filter(k -> k.literals() == null).count();
    return (kindOnly << 32) + anyOf.size();
  }
}
