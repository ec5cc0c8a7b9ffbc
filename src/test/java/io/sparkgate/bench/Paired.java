package io.sparkgate.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Two endpoints compared round by round. On the 2-core VMs this bench runs on the machine drifts within a run
 * (direct's own p50 moved from 157 to 228 us between rounds of one run), and a drift moves every endpoint of a
 * round together. The medians of two endpoints' rounds taken apart keep that drift in each; the difference
 * inside each round cancels most of it, and how many rounds agree on the sign says whether a gap is more than
 * noise.
 */
record Paired(List<Double> differences) {

  /** {@code a[i] - b[i]} for each round both have; null when either has fewer than two rounds. */
  static Paired of(List<Double> a, List<Double> b) {
    if (a == null || b == null || Math.min(a.size(), b.size()) < 2) {
      return null;
    }
    List<Double> d = new ArrayList<>();
    for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
      d.add(a.get(i) - b.get(i));
    }
    return new Paired(List.copyOf(d));
  }

  /** The median difference (the mean of the middle two of an even count). */
  double median() {
    List<Double> sorted = differences.stream().sorted().toList();
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  /** Rounds in which the first endpoint's figure was lower. */
  long lowerIn() {
    return differences.stream().filter(x -> x < 0).count();
  }

  /** "-12.3 (lower in 4 of 5 rounds: -20, -15, -12, 3, -9)". */
  String describe() {
    StringBuilder rounds = new StringBuilder();
    for (double x : differences) {
      rounds.append(rounds.length() == 0 ? "" : ", ").append(String.format("%+.0f", x));
    }
    return String.format("%+.1f (lower in %d of %d rounds: %s)", median(), lowerIn(), differences.size(), rounds);
  }

  Map<String, Object> toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("per_round", differences);
    m.put("median", median());
    m.put("lower_in", lowerIn());
    return m;
  }
}
