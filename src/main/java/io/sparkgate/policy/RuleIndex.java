package io.sparkgate.policy;

import io.sparkgate.inspect.Fact;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * Finds the rules a request could match without evaluating them: each rule is filed under the keys of its
 * condition's {@link Guard} and the literal RPC names of its {@code match}, so finding them costs lookups per
 * fact of the request, not per rule. What it finds is a superset, in rule order, of the rules that match.
 * Built in the constructor of its {@link Policy} and only read after, so shared by threads as the policy is.
 */
final class RuleIndex {
  private final BitSet unguarded = new BitSet();
  private final List<KindRules> byKind = new ArrayList<>();
  private final BitSet anyRpc = new BitSet();
  private final LiteralIndex byRpc = new LiteralIndex();

  RuleIndex(List<Rule> rules) {
    for (int i = 0; i < rules.size(); i++) {
      Rule r = rules.get(i);
      Guard guard = guard(r);
      if (guard.isNone()) unguarded.set(i);
      for (Guard.Key k : guard.anyOf()) kindRules(k.kind()).add(k, i);
      StringMatcher.Literals rpcs = r.match().rpc() == null ? null : r.match().rpc().literals();
      if (rpcs == null) anyRpc.set(i);
      else byRpc.add(rpcs, i);
    }
  }

  /**
   * A rule that tests the backend profile refuses the request when it is evaluated while the profile is not
   * known, whatever the facts, so it is filed by fact kind alone: it is evaluated for every request with a
   * fact of a kind it needs (policies rely on this to fail closed), not only for those whose attributes it
   * could match.
   */
  private static Guard guard(Rule r) {
    return r.when() == null ? Guard.NONE : r.when().guard(!r.when().needsProfile());
  }

  private KindRules kindRules(Fact.Kind kind) {
    for (KindRules k : byKind) if (k.kind == kind) return k;
    KindRules k = new KindRules(kind);
    byKind.add(k);
    return k;
  }

  /** The rules to evaluate for this request, a new set. Lists, not maps, on this path: no iterators. */
  BitSet candidates(EvalInput in) {
    BitSet out = (BitSet) unguarded.clone();
    for (int i = 0; i < byKind.size(); i++) {
      KindRules k = byKind.get(i);
      k.collect(in.facts().ofKind(k.kind), out);
    }
    if (!byRpc.isEmpty()) {
      BitSet rpc = (BitSet) anyRpc.clone();
      byRpc.collect(in.rpc(), rpc);
      out.and(rpc);
    }
    return out;
  }

  /** The rules guarded by facts of one kind: by its presence alone, or by a subkind or attribute's literals. */
  private static final class KindRules {
    private final Fact.Kind kind;
    private final BitSet anyFact = new BitSet();

    /** The null attribute is the subkind. */
    private final List<String> attrs = new ArrayList<>();

    private final List<LiteralIndex> byAttr = new ArrayList<>();

    KindRules(Fact.Kind kind) {
      this.kind = kind;
    }

    void add(Guard.Key key, int rule) {
      if (key.literals() == null) {
        anyFact.set(rule);
        return;
      }
      int at = attrs.indexOf(key.attr());
      if (at < 0) {
        attrs.add(key.attr());
        byAttr.add(new LiteralIndex());
        at = attrs.size() - 1;
      }
      byAttr.get(at).add(key.literals(), rule);
    }

    void collect(List<Fact> facts, BitSet into) {
      if (facts.isEmpty()) return;
      into.or(anyFact);
      for (int a = 0; a < attrs.size(); a++) {
        String attr = attrs.get(a);
        for (int f = 0; f < facts.size(); f++) {
          Fact fact = facts.get(f);
          byAttr.get(a).collect(attr == null ? fact.subkind() : fact.get(attr), into);
        }
      }
    }
  }
}
