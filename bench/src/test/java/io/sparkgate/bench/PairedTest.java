package io.sparkgate.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PairedTest {

  @Test
  void differencesAreTakenInsideEachRound() {
    // The machine drifts by 100 us between rounds; the first endpoint is 10 us faster in every
    // round but one.
    Paired p =
        Paired.of(
            List.of(90.0, 190.0, 295.0, 390.0, 490.0), List.of(100.0, 200.0, 290.0, 400.0, 500.0));

    assertEquals(List.of(-10.0, -10.0, 5.0, -10.0, -10.0), p.differences());
    assertEquals(-10.0, p.median());
    assertEquals(4, p.lowerIn());
    assertEquals("-10.0 (lower in 4 of 5 rounds: -10, -10, +5, -10, -10)", p.describe());
  }

  @Test
  void anEvenCountTakesTheMeanOfTheMiddleTwo() {
    Paired p = Paired.of(List.of(1.0, 2.0, 3.0, 4.0), List.of(0.0, 0.0, 0.0, 0.0));

    assertEquals(2.5, p.median());
    assertEquals(0, p.lowerIn());
  }

  @Test
  void onlyRoundsBothEndpointsHaveArePaired() {
    Paired p = Paired.of(List.of(5.0, 6.0, 7.0), List.of(1.0, 1.0));

    assertEquals(List.of(4.0, 5.0), p.differences());
    assertEquals(Map.of("per_round", List.of(4.0, 5.0), "median", 4.5, "lower_in", 0L), p.toJson());
  }

  @Test
  void theIntervalIsTheMedianRankInterval() {
    // Forty cycles: the 95% interval runs from the 14th smallest difference to the 14th largest
    // (P(Binomial(40, 1/2) <= 13) = 0.019, <= 14: 0.040).
    List<Double> a = new ArrayList<>();
    List<Double> zeros = new ArrayList<>();
    for (int i = 40; i >= 1; i--) {
      a.add((double) i);
      zeros.add(0.0);
    }
    Paired p = Paired.of(a, zeros);

    assertArrayEquals(new double[] {14.0, 27.0}, p.confidence95());
    assertEquals("+20.5, 95% +14.0 to +27.0 (lower in 0 of 40 cycles)", p.describe("cycles"));
    assertEquals(List.of(14.0, 27.0), p.toJson().get("ci95"));
  }

  @Test
  void sixRoundsGiveTheRangeAndFiveNoInterval() {
    // 1/64 = 0.016 that all six fall on one side of the median: the range is a 96.9% interval. With
    // five,
    // 1/32 = 0.031 is already above 2.5%.
    Paired six =
        Paired.of(List.of(3.0, -1.0, 4.0, 1.0, 5.0, 9.0), List.of(0.0, 0.0, 0.0, 0.0, 0.0, 0.0));
    Paired five = Paired.of(List.of(3.0, -1.0, 4.0, 1.0, 5.0), List.of(0.0, 0.0, 0.0, 0.0, 0.0));

    assertArrayEquals(new double[] {-1.0, 9.0}, six.confidence95());
    assertEquals(
        "+3.5, 95% -1.0 to +9.0 (lower in 1 of 6 rounds: +3, -1, +4, +1, +5, +9)", six.describe());
    assertNull(five.confidence95());
    assertFalse(five.toJson().containsKey("ci95"));
  }

  @Test
  void roundsWithoutAFigureAreLeftOut() {
    Paired p = Paired.of(List.of(5.0, Double.NaN, 7.0, 8.0), List.of(1.0, 1.0, Double.NaN, 2.0));

    assertEquals(List.of(4.0, 6.0), p.differences());
    assertNull(Paired.of(List.of(5.0, Double.NaN), List.of(1.0, 1.0)));
  }

  @Test
  void fewerThanTwoRoundsOrAMissingEndpointGiveNothing() {
    assertNull(Paired.of(List.of(1.0), List.of(2.0)));
    assertNull(Paired.of(null, List.of(1.0, 2.0)));
    assertNull(Paired.of(List.of(1.0, 2.0), null));
  }
}
