package io.sparkgate.policy;

import io.sparkgate.inspect.Fact;
import java.util.Set;

/** A compiled, immutable {@code when} condition over one request's facts and the backend profile. */
interface Condition {
  /** Returned by a true condition that no single fact made true (not, backend). */
  Fact NO_WITNESS = new Fact(Fact.Kind.REQUEST, "", java.util.Map.of());

  /**
   * The fact that made this true (its attributes fill the rule's message), {@link #NO_WITNESS}, or null when
   * false. Throws {@link ProfileUnknown} when it needs the backend profile and that is not known yet.
   */
  Fact test(EvalInput in);

  /**
   * Fact kinds of which at least one must be present for this to be true, or empty when there is no such
   * requirement. Used to skip rules that cannot match a request without evaluating them.
   */
  Set<Fact.Kind> requiredKinds();

  /** The backend profile is needed and not known yet; the rule refuses (fail closed). */
  final class ProfileUnknown extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ProfileUnknown() {
      super("the backend profile is not known yet", null, false, false);
    }
  }
}
