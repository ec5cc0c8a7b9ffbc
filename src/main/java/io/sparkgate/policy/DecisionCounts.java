package io.sparkgate.policy;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * How often each rule decided each way since the proxy started, for the metrics endpoint. Outcomes are
 * {@code allow}, {@code deny}, {@code rewrite}, {@code audit} (an audit rule matched) and {@code shadow} (a
 * shadow rule matched: what it would have decided is in the audit record), and {@code opa_error} (OPA
 * gave no usable answer). Rule names come from the policy
 * files, so the set of keys is as small as the policy.
 */
public final class DecisionCounts {
  private final Map<Key, LongAdder> counts = new ConcurrentHashMap<>();

  /** One outcome of one rule. */
  public record Key(String outcome, String rule) {
    // Written out: a record's generated hashCode and equals go through method handles, on every
    // call.
    @Override
    public int hashCode() {
      return 31 * Objects.hashCode(outcome) + Objects.hashCode(rule);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Key k
          && Objects.equals(outcome, k.outcome)
          && Objects.equals(rule, k.rule);
    }
  }

  private void count(String outcome, String rule) {
    LongAdder n = counts.get(new Key(outcome, rule));
    if (n == null) {
      n = counts.computeIfAbsent(new Key(outcome, rule), k -> new LongAdder());
    }
    n.increment();
  }

  /** Counts the effect that ended a message's evaluation, and the audit and shadow rules it matched. */
  void count(Decision d) {
    countOutcome(d);
    countMatches(d);
  }

  /** Counts only the effect under its rule (for a decision whose matches were counted when it was made). */
  void countOutcome(Decision d) {
    count(d.effect().label(), d.rule());
  }

  /** Counts only the audit and shadow rules a decision matched. */
  void countMatches(Decision d) {
    for (String rule : d.audits()) {
      count(Effect.AUDIT.label(), rule);
    }
    for (String shadow : d.shadow()) {
      // "deny:no-udf": the rule's name follows its effect.
      count("shadow", shadow.substring(shadow.indexOf(':') + 1));
    }
  }

  /**
   * OPA gave no usable answer (outcome {@code opa_error}, rule {@code opa-unavailable}), counted besides the
   * decision {@code on_error} made.
   */
  void countOpaError() {
    count("opa_error", OpaGate.UNAVAILABLE_RULE);
  }

  /** The outcomes seen so far; the counts go on growing. */
  public Map<Key, LongAdder> live() {
    return Collections.unmodifiableMap(counts);
  }
}
