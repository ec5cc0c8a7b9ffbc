package io.sparkgate.route;

import io.sparkgate.call.Principal;
import io.sparkgate.config.MatchConfig;
import io.sparkgate.config.RouteConfig;
import java.util.List;

/** Whether a route with this match takes a principal, asked of the real {@link Routes}: for tests. */
public final class RouteProbe {
  private RouteProbe() {}

  /** @param authority the host dialled; null: unknown (the router then has an empty one) */
  public static boolean takes(MatchConfig match, Principal who, String authority) {
    Routes routes =
        new Routes(
            List.of(
                new RouteConfig(match, "matched"), new RouteConfig(MatchConfig.ANYONE, "rest")));
    return routes.pool(who, authority == null ? "" : authority).orElseThrow().equals("matched");
  }
}
