package io.sparkgate.policy;

import java.util.Locale;

/** What a matching rule does. */
public enum Effect {
  /** Refuse the request. */
  DENY,
  /** Let the request through; later rules are not consulted. */
  ALLOW,
  /** Record that the rule matched and go on to the next rule. */
  AUDIT,
  /** Replace the request with what a registered {@link RequestRewriter} returns, then let it through. */
  REWRITE;

  String label() {
    return name().toLowerCase(Locale.ROOT);
  }
}
