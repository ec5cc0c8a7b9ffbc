package io.sparkgate.policy;

import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** The condition kinds: fact, any, all, not, backend. Each is an immutable node of the compiled tree. */
final class Conditions {
  private Conditions() {}

  /**
   * True if some fact of one of the kinds matches the subkind and every attribute matcher, and neither
   * {@code subkindNot} nor any {@code attrsNot} matcher: the allowlist form ("a function whose name is not one
   * of these"). An attribute
   * missing from the fact is not on any allowlist, so it never saves the fact.
   */
  record FactCondition(
      Set<Fact.Kind> kinds,
      StringMatcher subkind,
      StringMatcher subkindNot,
      Map<String, AttrMatcher> attrs,
      Map<String, AttrMatcher> attrsNot)
      implements Condition {
    FactCondition {
      kinds = Set.copyOf(kinds);
      attrs = Map.copyOf(attrs);
      attrsNot = Map.copyOf(attrsNot);
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
      if (subkindNot != null && subkindNot.matches(f.subkind())) return false;
      for (Map.Entry<String, AttrMatcher> a : attrs.entrySet()) {
        if (!a.getValue().matches(f, a.getKey())) return false; // a missing attribute never matches
      }
      for (Map.Entry<String, AttrMatcher> a : attrsNot.entrySet()) {
        if (a.getValue().matches(f, a.getKey())) return false;
      }
      return true;
    }

    @Override
    public Guard guard(boolean byLiterals) {
      Set<Guard.Key> keys = new HashSet<>();
      for (Fact.Kind kind : kinds)
        keys.add(byLiterals ? literalKey(kind) : new Guard.Key(kind, null, null));
      return new Guard(keys);
    }

    /** On the subkind, else the first attribute by name (a choice that does not vary), that has literals. */
    private Guard.Key literalKey(Fact.Kind kind) {
      if (subkind != null && subkind.literals() != null)
        return new Guard.Key(kind, null, subkind.literals());
      for (String attr : new TreeSet<>(attrs.keySet())) {
        StringMatcher.Literals literals = attrs.get(attr).anyCase().literals();
        if (literals != null) return new Guard.Key(kind, attr, literals);
      }
      return new Guard.Key(kind, null, null);
    }

    @Override
    public boolean needsProfile() {
      return false;
    }
  }

  /**
   * An attribute's matcher, compiled twice: ignoring case, and exact for the facts whose value Spark compares
   * exactly ({@link Fact#caseSensitive}: configuration keys). The fact decides which applies, so that one
   * condition over several kinds reads each the way Spark does.
   */
  record AttrMatcher(StringMatcher anyCase, StringMatcher exactCase) {
    /** False for a missing attribute. */
    boolean matches(Fact f, String attr) {
      String v = f.get(attr);
      if (v == null) return false;
      return (f.caseSensitive(attr) ? exactCase : anyCase).matches(v);
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
    public Guard guard(boolean byLiterals) {
      return Guard.union(children.stream().map(c -> c.guard(byLiterals)).toList());
    }

    @Override
    public boolean needsProfile() {
      return children.stream().anyMatch(Condition::needsProfile);
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
    public Guard guard(boolean byLiterals) {
      return Guard.strongest(children.stream().map(c -> c.guard(byLiterals)).toList());
    }

    @Override
    public boolean needsProfile() {
      return children.stream().anyMatch(Condition::needsProfile);
    }
  }

  record Not(Condition child) implements Condition {
    @Override
    public Fact test(EvalInput in) {
      return child.test(in) == null ? NO_WITNESS : null;
    }

    @Override
    public Guard guard(boolean byLiterals) {
      return Guard.NONE;
    }

    @Override
    public boolean needsProfile() {
      return child.needsProfile();
    }
  }

  /** A test on the backend profile: extensions loaded (all of / any of), catalog classes, Spark version. */
  record Backend(
      List<String> extensionsAll,
      List<String> extensionsAny,
      List<String> catalogImplAny,
      StringMatcher sparkVersion)
      implements Condition {
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
      if (!extensionsAny.isEmpty() && extensionsAny.stream().noneMatch(p::hasExtension))
        return null;
      if (!catalogImplAny.isEmpty()
          && p.catalogs().values().stream().noneMatch(catalogImplAny::contains)) return null;
      if (sparkVersion != null && !sparkVersion.matches(p.sparkVersion())) return null;
      return NO_WITNESS;
    }

    @Override
    public Guard guard(boolean byLiterals) {
      return Guard.NONE;
    }

    @Override
    public boolean needsProfile() {
      return true;
    }
  }
}
