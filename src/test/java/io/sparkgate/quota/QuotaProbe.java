package io.sparkgate.quota;

import io.sparkgate.call.Principal;
import io.sparkgate.config.MatchConfig;
import io.sparkgate.config.QuotasConfig;
import io.sparkgate.config.QuotasConfig.Limits;
import java.time.Duration;
import java.util.List;

/** Whether a quota override with this match takes a principal, asked of the real {@link Rules}: for tests. */
public final class QuotaProbe {
  private QuotaProbe() {}

  /** @param authority the host dialled; null: unknown */
  public static boolean takes(MatchConfig match, Principal who, String authority) {
    Limits one = QuotaCalls.limits(1, 0, 0, 0);
    Rules rules =
        new Rules(
            new QuotasConfig(
                Limits.NONE,
                Limits.NONE,
                List.of(QuotaCalls.override(match, one, Limits.NONE)),
                Duration.ofMinutes(1)));
    // Only the override limits anyone: the budget it finds says whether it took the principal.
    return rules.budget(who, QuotaCalls.call("ExecutePlan", who, authority)).limitsPrincipal();
  }
}
