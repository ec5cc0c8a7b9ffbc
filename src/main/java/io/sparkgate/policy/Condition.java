package io.sparkgate.policy;

import io.sparkgate.inspect.Fact;

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
   * What a request must contain for this to be true, used to skip rules without evaluating them: with
   * {@code byLiterals} false, keys on fact kinds alone; with it true, also on the literal values or prefixes
   * of a subkind or attribute matcher where there are some.
   */
  Guard guard(boolean byLiterals);

  /** Whether this tests the backend profile, and so throws {@link ProfileUnknown} while that is not known. */
  boolean needsProfile();

  /** The backend profile is needed and not known yet; the rule refuses (fail closed). */
  final class ProfileUnknown extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ProfileUnknown() {
      super("the backend profile is not known yet", null, false, false);
    }
  }
}
