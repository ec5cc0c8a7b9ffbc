package io.sparkgate.lakehouse;

import java.time.DateTimeException;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The instant a {@code TIMESTAMP AS OF '<text>'} string names, as Spark's string-to-timestamp cast reads it:
 * {@code yyyy[-M[-d]]} optionally followed by {@code [ T]H:m[:s[.fraction]]} and a zone ({@code Z},
 * {@code +HH[:mm]}, {@code +HHmm}, or a region such as {@code UTC} or {@code Europe/Paris}); without a zone
 * the session time zone decides. Anything else (a time without a date, which depends on "today", or a form
 * we do not recognise) is not converted. Fractions beyond microseconds are truncated, as Spark does, and
 * Iceberg then truncates microseconds to milliseconds.
 */
final class TimestampValues {
  private static final Pattern TIMESTAMP =
      Pattern.compile(
          "([0-9]{4})(?:-([0-9]{1,2})(?:-([0-9]{1,2}))?)?"
              + "(?:[ T]([0-9]{1,2}):([0-9]{1,2})(?::([0-9]{1,2})(?:\\.([0-9]{1,9}))?)?)?"
              + "\\s*(Z|[+-][0-9]{1,2}(?::?[0-9]{2})?|[A-Za-z][A-Za-z0-9_/+\\-:]*)?");
  private static final Pattern OFFSET = Pattern.compile("([+-])([0-9]{1,2})(?::?([0-9]{2}))?");

  private TimestampValues() {}

  /** Epoch milliseconds, or throws IllegalArgumentException saying why the text cannot be converted. */
  static long epochMillis(String text, String sessionTimeZone) {
    Matcher m = TIMESTAMP.matcher(text.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "the timestamp '"
              + text
              + "' is not in a form Sparkgate can convert "
              + "(yyyy-MM-dd[ HH:mm[:ss[.fraction]]][zone])");
    }
    try {
      int year = Integer.parseInt(m.group(1));
      int month = m.group(2) == null ? 1 : Integer.parseInt(m.group(2));
      int day = m.group(3) == null ? 1 : Integer.parseInt(m.group(3));
      int hour = m.group(4) == null ? 0 : Integer.parseInt(m.group(4));
      int minute = m.group(5) == null ? 0 : Integer.parseInt(m.group(5));
      int second = m.group(6) == null ? 0 : Integer.parseInt(m.group(6));
      String fraction = m.group(7) == null ? "" : m.group(7);
      int micros = fraction.isEmpty() ? 0 : Integer.parseInt((fraction + "00000").substring(0, 6));
      LocalDateTime local =
          LocalDateTime.of(year, month, day, hour, minute, second).plus(micros, ChronoUnit.MICROS);
      ZoneId zone = m.group(8) != null ? zone(m.group(8)) : sessionZone(sessionTimeZone);
      long epochMicros =
          ChronoUnit.MICROS.between(java.time.Instant.EPOCH, local.atZone(zone).toInstant());
      return Math.floorDiv(epochMicros, 1000L);
    } catch (DateTimeException | ArithmeticException e) {
      throw new IllegalArgumentException(
          "the timestamp '" + text + "' is not valid: " + e.getMessage(), e);
    }
  }

  /** The session's zone; UTC when the proxy does not know it (Spark's default is the server JVM's zone). */
  static ZoneId sessionZone(String sessionTimeZone) {
    if (sessionTimeZone == null || sessionTimeZone.isBlank()) return ZoneOffset.UTC;
    try {
      return zone(sessionTimeZone.strip());
    } catch (DateTimeException e) {
      throw new IllegalArgumentException(
          "the session time zone '" + sessionTimeZone + "' is not understood", e);
    }
  }

  private static ZoneId zone(String id) {
    if (id.equals("Z")) return ZoneOffset.UTC;
    Matcher offset = OFFSET.matcher(id);
    if (offset.matches()) {
      int sign = offset.group(1).equals("-") ? -1 : 1;
      int hours = Integer.parseInt(offset.group(2));
      int minutes = offset.group(3) == null ? 0 : Integer.parseInt(offset.group(3));
      return ZoneOffset.ofHoursMinutes(sign * hours, sign * minutes);
    }
    return ZoneId.of(id, ZoneId.SHORT_IDS);
  }
}
