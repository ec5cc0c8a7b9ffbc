package io.sparkgate.inspect;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Collects facts for one message. Bounded: a hostile plan could otherwise make millions of facts; past the
 * bound the sink keeps one UNCLASSIFIED too_many_facts, which a policy refuses.
 */
final class FactSink {
  private final int max;
  private final List<Fact> facts = new ArrayList<>();
  private boolean overflowed;

  FactSink(int max) {
    this.max = max;
  }

  void add(Fact.Kind kind, String subkind, Map<String, String> attrs) {
    if (admit()) facts.add(new Fact(kind, subkind, attrs));
  }

  /** Adds a fact made earlier (facts are immutable), under the same bound. */
  void add(Fact fact) {
    if (admit()) facts.add(fact);
  }

  /** Whether the bound was reached: the facts end with too_many_facts. */
  boolean overflowed() {
    return overflowed;
  }

  private boolean admit() {
    if (facts.size() >= max) {
      if (!overflowed) {
        overflowed = true;
        facts.add(
            new Fact(
                Fact.Kind.UNCLASSIFIED, "too_many_facts", Map.of("limit", Integer.toString(max))));
      }
      return false;
    }
    return true;
  }

  /** A fluent builder for one fact's attributes; {@code null} values are left out. */
  Builder fact(Fact.Kind kind, String subkind) {
    return new Builder(kind, subkind);
  }

  void unclassified(String what, String where, String detail) {
    fact(Fact.Kind.UNCLASSIFIED, what).put("where", where).put("detail", detail).emit();
  }

  Facts build() {
    return new Facts(facts);
  }

  final class Builder {
    private final Fact.Kind kind;
    private final String subkind;
    // Pairs in the order put, sorted once as the fact is made (Attrs): no map for a handful of
    // attributes.
    private String[] names = new String[8];
    private String[] values = new String[8];
    private int size;

    private Builder(Fact.Kind kind, String subkind) {
      this.kind = kind;
      this.subkind = subkind;
    }

    Builder put(String key, Object value) {
      if (value != null) set(key, value.toString());
      return this;
    }

    Builder putAll(String prefix, Map<String, String> values) {
      values.forEach((k, v) -> set(prefix + k, v));
      return this;
    }

    /** A later value for a name replaces the earlier one. */
    private void set(String name, String value) {
      if (names == null) {
        throw new IllegalStateException("this fact was already emitted");
      }
      for (int i = 0; i < size; i++) {
        if (names[i].equals(name)) {
          values[i] = value;
          return;
        }
      }
      if (size == names.length) {
        names = Arrays.copyOf(names, size * 2);
        values = Arrays.copyOf(values, size * 2);
      }
      names[size] = name;
      values[size] = value;
      size++;
    }

    /** Adds the fact; the builder is done (the fact keeps its arrays). */
    void emit() {
      if (names == null) {
        throw new IllegalStateException("this fact was already emitted");
      }
      add(kind, subkind, Attrs.sorted(names, values, size));
      names = null;
      values = null;
    }
  }
}
