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

  /**
   * {@code a[i] - b[i]} for each round both have a figure for (NaN: none); null when fewer than two rounds
   * pair up.
   */
  static Paired of(List<Double> a, List<Double> b) {
    if (a == null || b == null) {
      return null;
    }
    List<Double> d = new ArrayList<>();
    for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
      double x = a.get(i) - b.get(i);
      if (!Double.isNaN(x)) {
        d.add(x);
      }
    }
    return d.size() < 2 ? null : new Paired(List.copyOf(d));
  }

  /** The median difference (the mean of the middle two of an even count). */
  double median() {
    return median(differences);
  }

  /** The median of the figures that are numbers (the mean of the middle two of an even count; NaN: none). */
  static double median(List<Double> figures) {
    List<Double> sorted = figures.stream().filter(x -> !Double.isNaN(x)).sorted().toList();
    int n = sorted.size();
    if (n == 0) {
      return Double.NaN;
    }
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  /** Rounds in which the first endpoint's figure was lower. */
  long lowerIn() {
    return differences.stream().filter(x -> x < 0).count();
  }

  /**
   * A distribution-free 95% confidence interval for the median difference: the k-th smallest and k-th largest
   * differences, with k the largest rank for which Binomial(n, 1/2) falls below k with probability at most
   * 2.5% (each difference lies above the true median with probability one half, whatever the noise's shape).
   * Null below six rounds, where no such k exists. An interval that excludes zero is a gap beyond the noise.
   */
  double[] confidence95() {
    int n = differences.size();
    int k = 0; // P(X < k) <= 0.025, largest such k
    double below = 0; // P(X < k + 1) as k grows
    for (int i = 0; i <= n / 2; i++) {
      below += binomialHalf(n, i);
      if (below > 0.025) {
        break;
      }
      k = i + 1;
    }
    if (k == 0) {
      return null;
    }
    List<Double> sorted = differences.stream().sorted().toList();
    return new double[] {sorted.get(k - 1), sorted.get(n - k)};
  }

  /** P(X = i) for X ~ Binomial(n, 1/2). */
  private static double binomialHalf(int n, int i) {
    double logChoose = 0;
    for (int j = 1; j <= i; j++) {
      logChoose += Math.log(n - i + j) - Math.log(j);
    }
    return Math.exp(logChoose - n * Math.log(2));
  }

  /**
   * "-12.3 (lower in 4 of 5 rounds: -20, -15, -12, +3, -9)"; from six rounds with the 95% interval, and beyond
   * ten without the list: "-12.3, 95% -15.0 to -9.1 (lower in 31 of 40 rounds)".
   */
  String describe() {
    return describe("rounds");
  }

  /** As {@link #describe()}, naming the pairs {@code unit} ("rounds", "cycles"). */
  String describe(String unit) {
    StringBuilder out = new StringBuilder(String.format("%+.1f", median()));
    double[] ci = confidence95();
    if (ci != null) {
      out.append(String.format(", 95%% %+.1f to %+.1f", ci[0], ci[1]));
    }
    out.append(String.format(" (lower in %d of %d %s", lowerIn(), differences.size(), unit));
    if (differences.size() <= 10) {
      StringBuilder each = new StringBuilder();
      for (double x : differences) {
        each.append(each.length() == 0 ? "" : ", ").append(String.format("%+.0f", x));
      }
      out.append(": ").append(each);
    }
    return out.append(')').toString();
  }

  Map<String, Object> toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("per_round", differences);
    m.put("median", median());
    m.put("lower_in", lowerIn());
    double[] ci = confidence95();
    if (ci != null) {
      m.put("ci95", List.of(ci[0], ci[1]));
    }
    return m;
  }
}
