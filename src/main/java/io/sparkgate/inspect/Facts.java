package io.sparkgate.inspect;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/** The immutable, ordered facts of one request message, with cheap queries by kind. */
public final class Facts {
  private static final Facts EMPTY = new Facts(List.of());

  private final List<Fact> all;
  private final Map<Fact.Kind, List<Fact>> byKind = new EnumMap<>(Fact.Kind.class);

  Facts(List<Fact> facts) {
    this.all = List.copyOf(facts);
    for (Fact f : all) byKind.computeIfAbsent(f.kind(), k -> new java.util.ArrayList<>()).add(f);
    byKind.replaceAll((k, v) -> List.copyOf(v));
  }

  public static Facts empty() {
    return EMPTY;
  }

  public static Facts of(List<Fact> facts) {
    return new Facts(facts);
  }

  /** Every fact, in the order found. */
  public List<Fact> all() {
    return all;
  }

  public List<Fact> ofKind(Fact.Kind kind) {
    return byKind.getOrDefault(kind, List.of());
  }

  public boolean has(Fact.Kind kind) {
    return byKind.containsKey(kind);
  }

  public boolean any(Fact.Kind kind, Predicate<Fact> test) {
    return ofKind(kind).stream().anyMatch(test);
  }

  public int size() {
    return all.size();
  }

  /** These facts followed by others. */
  public Facts plus(Facts other) {
    if (other.all.isEmpty()) return this;
    java.util.ArrayList<Fact> joined = new java.util.ArrayList<>(all);
    joined.addAll(other.all);
    return new Facts(joined);
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder();
    for (Fact f : all) b.append(f).append('\n');
    return b.toString();
  }
}
