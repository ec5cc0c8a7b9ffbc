package io.sparkgate.grants;

import java.util.List;

/**
 * What the grants say of one request: each access with the grant that allows it, or the first access no
 * grant allows, or what could not be resolved.
 *
 * @param granted every access allowed so far, with its grant ({@value DataAccess#BY_DEFAULT} under {@code
 *     default: allow} for data no grant covers)
 * @param refused the access refused, or null
 * @param unresolved what Sparkgate could not resolve with certainty, or null
 */
public record Verdict(List<Granted> granted, Access refused, String unresolved) {

  /** An access and the grant that allows it. */
  public record Granted(Access access, String grant) {}

  public Verdict {
    granted = List.copyOf(granted);
  }

  static final Verdict NOTHING = new Verdict(List.of(), null, null);

  public boolean allowed() {
    return refused == null && unresolved == null;
  }
}
