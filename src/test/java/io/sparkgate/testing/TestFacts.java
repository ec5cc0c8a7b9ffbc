package io.sparkgate.testing;

import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;

/** Questions tests ask of the inspector's facts that the proxy itself never asks. */
public final class TestFacts {
  private TestFacts() {}

  /** True if some fact of this kind has this subkind. */
  public static boolean has(Facts facts, Fact.Kind kind, String subkind) {
    return facts.any(kind, f -> f.subkind().equals(subkind));
  }
}
