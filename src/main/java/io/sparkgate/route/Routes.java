package io.sparkgate.route;

import io.sparkgate.call.MatchBlock;
import io.sparkgate.call.Principal;
import io.sparkgate.config.RouteConfig;
import java.util.List;
import java.util.Optional;

/** The configured routes, compiled: the first whose match takes a principal names its pool. */
final class Routes {
  private record Compiled(MatchBlock match, String pool) {}

  private final List<Compiled> routes;

  Routes(List<RouteConfig> routes) {
    this.routes =
        routes.stream().map(r -> new Compiled(MatchBlock.of(r.match()), r.pool())).toList();
  }

  /** The pool for this principal, dialling {@code authority}; empty when no route takes it. */
  Optional<String> pool(Principal principal, String authority) {
    for (Compiled r : routes) {
      if (r.match.takes(principal, authority)) return Optional.of(r.pool);
    }
    return Optional.empty();
  }
}
