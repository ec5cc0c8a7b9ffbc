package io.sparkgate.testing;

import io.sparkgate.call.Principal;
import java.util.List;
import java.util.Optional;

/** Verified principals for tests, as a static token names them. */
public final class Principals {
  private Principals() {}

  /** @param tenant null for none */
  public static Principal principal(String name, String tenant, String... groups) {
    return new Principal(
        name,
        List.of(groups),
        Optional.ofNullable(tenant),
        Principal.Method.STATIC_TOKEN,
        Optional.empty());
  }
}
