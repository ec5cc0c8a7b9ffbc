package io.sparkgate.route;

import io.sparkgate.call.Call;
import io.sparkgate.call.Route;
import io.sparkgate.call.Stage;
import io.sparkgate.forward.CallHook;

/**
 * The route stage: which backend a call goes to, recorded in the call for the forwarding layer and the audit
 * record. One pool ({@code default}) of one backend today: every call of every session goes to it.
 */
public final class RouteStage implements Stage {
  /** The pool a configuration with one {@code backend:} has. */
  public static final String DEFAULT_POOL = "default";

  private final Route route;

  /** @param backend the backend's {@code host:port} */
  public RouteStage(String backend) {
    this.route = new Route(DEFAULT_POOL, backend);
  }

  @Override
  public CallHook open(Call call) {
    call.route(route);
    return CallHook.PASS_THROUGH;
  }
}
