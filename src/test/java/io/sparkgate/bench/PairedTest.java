package io.sparkgate.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PairedTest {

  @Test
  void differencesAreTakenInsideEachRound() {
    // The machine drifts by 100 us between rounds; the first endpoint is 10 us faster in every round but one.
    Paired p = Paired.of(List.of(90.0, 190.0, 295.0, 390.0, 490.0), List.of(100.0, 200.0, 290.0, 400.0, 500.0));

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
  void fewerThanTwoRoundsOrAMissingEndpointGiveNothing() {
    assertNull(Paired.of(List.of(1.0), List.of(2.0)));
    assertNull(Paired.of(null, List.of(1.0, 2.0)));
    assertNull(Paired.of(List.of(1.0, 2.0), null));
  }
}
