package io.sparkgate.policy;

import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The condition kinds: fact, any, all, not, backend. Each is an immutable node of the compiled tree. */
final class Conditions {
  private Conditions() {}

  /** True if some fact of one of the kinds matches the subkind and every attribute matcher. */
  record FactCondition(Set<Fact.Kind> kinds, StringMatcher subkind, Map<String, StringMatcher> attrs)
      implements Condition {
    FactCondition {
      kinds = Set.copyOf(kinds);
      attrs = Map.copyOf(attrs);
    }

    @Override
    public Fact test(EvalInput in) {
      for (Fact.Kind kind : kinds) {
        for (Fact f : in.facts().ofKind(kind)) {
          if (matches(f)) return f;
        }
      }
      return null;
    }

    private boolean matches(Fact f) {
      if (subkind != null && !subkind.matches(f.subkind())) return false;
      for (Map.Entry<String, StringMatcher> a : attrs.entrySet()) {
        if (!a.getValue().matches(f.get(a.getKey()))) return false; // a missing attribute never matches
      }
      return true;
    }

    @Override
    public Set<Fact.Kind> requiredKinds() {
      return kinds;
    }
  }

  /** True if any child is (evaluated in order, first true wins). */
  record Any(List<Condition> children) implements Condition {
    Any {
      children = List.copyOf(children);
    }

    @Override
    public Fact test(EvalInput in) {
      for (Condition c : children) {
        Fact w = c.test(in);
        if (w != null) return w;
      }
      return null;
    }

    @Override
    public Set<Fact.Kind> requiredKinds() {
      Set<Fact.Kind> union = EnumSet.noneOf(Fact.Kind.class);
      for (Condition c : children) {
        if (c.requiredKinds().isEmpty()) return Set.of();
        union.addAll(c.requiredKinds());
      }
      return Set.copyOf(union);
    }
  }

  /** True if every child is (evaluated in the order written, stopping at the first false). */
  record All(List<Condition> children) implements Condition {
    All {
      children = List.copyOf(children);
    }

    @Override
    public Fact test(EvalInput in) {
      Fact witness = null;
      for (Condition c : children) {
        Fact w = c.test(in);
        if (w == null) return null;
        if (witness == null || witness == NO_WITNESS) witness = w;
      }
      return witness == null ? NO_WITNESS : witness;
    }

    @Override
    public Set<Fact.Kind> requiredKinds() {
      Set<Fact.Kind> best = Set.of();
      for (Condition c : children) {
        Set<Fact.Kind> k = c.requiredKinds();
        if (!k.isEmpty() && (best.isEmpty() || k.size() < best.size())) best = k;
      }
      return best;
    }
  }

  record Not(Condition child) implements Condition {
    @Override
    public Fact test(EvalInput in) {
      return child.test(in) == null ? NO_WITNESS : null;
    }

    @Override
    public Set<Fact.Kind> requiredKinds() {
      return Set.of();
    }
  }

  /** A test on the backend profile: extensions loaded (all of / any of), catalog classes, Spark version. */
  record Backend(List<String> extensionsAll, List<String> extensionsAny, List<String> catalogImplAny,
      StringMatcher sparkVersion) implements Condition {
    Backend {
      extensionsAll = List.copyOf(extensionsAll);
      extensionsAny = List.copyOf(extensionsAny);
      catalogImplAny = List.copyOf(catalogImplAny);
    }

    @Override
    public Fact test(EvalInput in) {
      BackendProfile p = in.profile();
      if (p == null) throw new ProfileUnknown();
      for (String e : extensionsAll) if (!p.hasExtension(e)) return null;
      if (!extensionsAny.isEmpty() && extensionsAny.stream().noneMatch(p::hasExtension)) return null;
      if (!catalogImplAny.isEmpty() && p.catalogs().values().stream().noneMatch(catalogImplAny::contains)) return null;
      if (sparkVersion != null && !sparkVersion.matches(p.sparkVersion())) return null;
      return NO_WITNESS;
    }

    @Override
    public Set<Fact.Kind> requiredKinds() {
      return Set.of();
    }
  }
}
