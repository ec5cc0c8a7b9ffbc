package io.sparkgate.call;

import java.util.Objects;

/**
 * Where the route stage sent a call: the pool that serves it and the backend ({@code host:port}) of that pool
 * holding the call's session.
 */
public record Route(String pool, String backend) {
  public Route {
    Objects.requireNonNull(pool, "pool");
    Objects.requireNonNull(backend, "backend");
  }
}
