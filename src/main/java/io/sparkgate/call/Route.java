package io.sparkgate.call;

import java.util.Objects;

/**
 * Where the route stage sent a call: the pool that serves it and the backend ({@code host:port}) of that pool
 * holding the call's session.
 *
 * @param newSession the session was not placed before this call: the place stage records the placement once
 *     the request has passed every check
 */
public record Route(String pool, String backend, boolean newSession) {
  public Route {
    Objects.requireNonNull(pool, "pool");
    Objects.requireNonNull(backend, "backend");
  }

  public Route(String pool, String backend) {
    this(pool, backend, false);
  }
}
