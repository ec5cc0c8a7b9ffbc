package io.sparkgate.route;

import java.util.Objects;

/** Where a session lives: the pool it was routed to and the backend ({@code host:port}) of that pool. */
record Placement(String pool, String backend) {
  Placement {
    Objects.requireNonNull(pool, "pool");
    Objects.requireNonNull(backend, "backend");
  }

  /** As stored in a shared store: {@code pool|backend} (pool names have no '|'). */
  String encode() {
    return pool + "|" + backend;
  }

  /** The placement {@link #encode()} wrote; null for a value that is not one. */
  static Placement decode(String value) {
    int bar = value == null ? -1 : value.indexOf('|');
    return bar <= 0 || bar == value.length() - 1
        ? null
        : new Placement(value.substring(0, bar), value.substring(bar + 1));
  }
}
