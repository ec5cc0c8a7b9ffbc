package io.sparkgate.inspect;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

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
        facts.add(new Fact(Fact.Kind.UNCLASSIFIED, "too_many_facts", Map.of("limit", Integer.toString(max))));
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
    // Sorted as the fact keeps them, so that the fact copies it without comparing keys again.
    private final Map<String, String> attrs = new TreeMap<>();

    private Builder(Fact.Kind kind, String subkind) {
      this.kind = kind;
      this.subkind = subkind;
    }

    Builder put(String key, Object value) {
      if (value != null) attrs.put(key, value.toString());
      return this;
    }

    Builder putAll(String prefix, Map<String, String> values) {
      values.forEach((k, v) -> attrs.put(prefix + k, v));
      return this;
    }

    void emit() {
      add(kind, subkind, attrs);
    }
  }
}
