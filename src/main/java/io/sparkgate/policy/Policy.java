package io.sparkgate.policy;

import io.grpc.Status;
import io.sparkgate.grants.Access;
import io.sparkgate.grants.Accesses;
import io.sparkgate.grants.DataAccess;
import io.sparkgate.grants.Verdict;
import io.sparkgate.inspect.Fact;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Optional;

/**
 * A compiled policy file: ordered rules and the default effect. Immutable and thread-safe. A request is
 * checked only against the rules a {@link RuleIndex} finds it could match (by the kinds, subkinds and literal
 * attribute values of its facts, and its RPC), so the cost does not grow with rules that cannot match it.
 */
public final class Policy {
  private final List<String> files;
  private final List<Rule> rules;
  private final Effect defaultEffect;
  private final RuleIndex index;
  private final DataAccess data;

  Policy(List<String> files, List<Rule> rules, Effect defaultEffect) {
    this(files, rules, defaultEffect, DataAccess.NONE);
  }

  Policy(List<String> files, List<Rule> rules, Effect defaultEffect, DataAccess data) {
    if (defaultEffect != Effect.ALLOW && defaultEffect != Effect.DENY) {
      throw new IllegalArgumentException("default must be allow or deny, got " + defaultEffect);
    }
    this.files = List.copyOf(files);
    this.rules = List.copyOf(rules);
    this.defaultEffect = defaultEffect;
    this.index = new RuleIndex(this.rules);
    this.data = data;
  }

  /** The {@code data_access} section's grants ({@link DataAccess#NONE} without one). */
  public DataAccess dataAccess() {
    return data;
  }

  /** Every file it was compiled from: the top one first, then the files it includes. */
  public List<String> files() {
    return files;
  }

  public Effect defaultEffect() {
    return defaultEffect;
  }

  public List<String> ruleNames() {
    return rules.stream().map(Rule::name).toList();
  }

  List<Rule> rules() {
    return rules;
  }

  /**
   * First matching enforced rule wins; shadow rules and audit rules that match are recorded and evaluation
   * goes on. What the rules let through is then checked against the grants: the data the request reaches
   * must be granted to the caller too. Never throws: an error in a rule is a refusal naming it.
   */
  Decision evaluate(EvalInput in) {
    Decision byRules = evaluate(in, index.candidates(in));
    if (byRules.refused() || !data.enforcing()) return byRules;
    Verdict verdict =
        data.check(
            in.principal(),
            in.groups(),
            Optional.of(in.tenant()).filter(t -> !t.isEmpty()),
            Accesses.of(in.facts()));
    if (verdict.allowed()) return byRules.withData(verdict);
    Decision refusal = refusal(verdict, byRules);
    if (!data.shadow()) return refusal;
    List<String> shadow = new ArrayList<>(byRules.shadow());
    shadow.add(Effect.DENY.label() + ":" + refusal.rule());
    return new Decision(
            byRules.effect(),
            byRules.rule(),
            byRules.message(),
            byRules.code(),
            byRules.errorClass(),
            byRules.sqlState(),
            byRules.rewriter(),
            shadow,
            byRules.audits(),
            null)
        .withData(verdict);
  }

  /**
   * The grants' refusal: it names the table or path and the privilege missing, never which grants or other
   * tables exist.
   */
  private static Decision refusal(Verdict verdict, Decision byRules) {
    if (verdict.unresolved() != null) {
      return Decision.refusal(
              Decision.DATA_UNRESOLVED_RULE,
              "Sparkgate cannot tell for certain which data "
                  + verdict.unresolved()
                  + " reaches, so the data access policy refuses it.",
              Status.Code.PERMISSION_DENIED,
              byRules.shadow(),
              byRules.audits())
          .withData(verdict);
    }
    Access a = verdict.refused();
    return Decision.refusal(
            Decision.DATA_ACCESS_RULE,
            "No grant gives you "
                + a.privilege().label()
                + " on "
                + a.object()
                + ". Ask its owner for a grant.",
            Status.Code.PERMISSION_DENIED,
            byRules.shadow(),
            byRules.audits())
        .withData(verdict);
  }

  /** As {@link #evaluate(EvalInput)}, considering only the rules in {@code candidates}. */
  Decision evaluate(EvalInput in, BitSet candidates) {
    List<String> shadow = new ArrayList<>();
    List<String> audits = new ArrayList<>();
    for (int i = candidates.nextSetBit(0); i >= 0; i = candidates.nextSetBit(i + 1)) {
      Rule rule = rules.get(i);
      Fact witness;
      try {
        if (!rule.match().matches(in)) continue;
        witness = rule.when() == null ? Condition.NO_WITNESS : rule.when().test(in);
      } catch (Condition.ProfileUnknown e) {
        if (rule.shadow() || rule.effect() == Effect.AUDIT) {
          shadow.add("unknown:" + rule.name());
          continue;
        }
        return Decision.refusal(
            rule.name(),
            "Sparkgate has not read the Spark server's profile yet (rule '"
                + rule.name()
                + "' depends on it); retry in a moment.",
            Status.Code.UNAVAILABLE,
            shadow,
            audits);
      } catch (RuntimeException e) {
        return Decision.refusal(
            rule.name(),
            "Sparkgate could not evaluate policy rule '" + rule.name() + "'.",
            Status.Code.PERMISSION_DENIED,
            shadow,
            audits);
      }
      if (witness == null) continue;
      if (rule.shadow()) {
        shadow.add(rule.effect().label() + ":" + rule.name());
        continue;
      }
      if (rule.effect() == Effect.AUDIT) {
        audits.add(rule.name());
        continue;
      }
      String message = rule.message().render(rule.name(), witness);
      return new Decision(
          rule.effect(),
          rule.name(),
          message,
          rule.code(),
          rule.errorClass(),
          rule.sqlState(),
          rule.rewriter(),
          shadow,
          audits,
          null);
    }
    if (defaultEffect == Effect.ALLOW) {
      return new Decision(
          Effect.ALLOW,
          Decision.DEFAULT_RULE,
          "",
          Status.Code.OK,
          null,
          null,
          null,
          shadow,
          audits,
          null);
    }
    return Decision.refusal(
        Decision.DEFAULT_RULE,
        "No rule of the policy allows this request (the default is deny).",
        Status.Code.PERMISSION_DENIED,
        shadow,
        audits);
  }
}
