package io.sparkgate.compat;

import java.util.ArrayList;
import java.util.List;

/** Helpers for client implementations. */
final class Outcomes {
  private Outcomes() {}

  /**
   * One outcome per asked scenario, in the asked order: what the program reported, or {@code fail} with
   * {@code missing} for a scenario it never reported (it crashed, hung, or its session never opened).
   */
  static List<Outcome> complete(List<Scenario> asked, List<Outcome> reported, String missing) {
    List<Outcome> all = new ArrayList<>();
    for (Scenario s : asked) {
      all.add(
          reported.stream()
              .filter(o -> o.scenario() == s)
              .findFirst()
              .orElse(new Outcome(s, "fail", missing)));
    }
    return all;
  }
}
