package io.sparkgate.yaml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

final class UnitsTest {
  @Test
  void durationsInErrors_writtenAsTheConfigurationWritesThem() {
    assertEquals("0s", Units.human(Duration.ZERO));
    assertEquals("50us", Units.human(Duration.ofNanos(50_000)));
    assertEquals("100ms", Units.human(Duration.ofMillis(100)));
    assertEquals("1500ms", Units.human(Duration.ofMillis(1500)));
    assertEquals("5m", Units.human(Duration.ofMinutes(5)));
    assertEquals("1d", Units.human(Duration.ofDays(1)));
    assertEquals("7ns", Units.human(Duration.ofNanos(7)));
  }

  @Test
  void bytes_unitsAndCase_pastALongIsOutOfRange() {
    assertEquals(OptionalLong.of(134_217_728), Units.bytes("134217728"));
    assertEquals(OptionalLong.of(4096), Units.bytes("4 KiB"));
    assertEquals(OptionalLong.of(128L * 1024 * 1024), Units.bytes("128mib"));
    assertTrue(Units.bytes("lots").isEmpty());
    assertTrue(Units.bytes("1.5MiB").isEmpty());
    assertThrows(ArithmeticException.class, () -> Units.bytes("17179869185GiB"));
    assertThrows(ArithmeticException.class, () -> Units.bytes("99999999999999999999"));
  }

  @Test
  void duration_needsAUnit_pastADurationIsOutOfRange() {
    assertEquals(Optional.of(Duration.ofNanos(50_000)), Units.duration("50us"));
    assertEquals(Optional.of(Duration.ofMinutes(5)), Units.duration(" 5m "));
    assertTrue(Units.duration("50").isEmpty());
    assertThrows(ArithmeticException.class, () -> Units.duration("99999999999999999999us"));
    assertThrows(ArithmeticException.class, () -> Units.duration("9223372036854775807h"));
  }
}
