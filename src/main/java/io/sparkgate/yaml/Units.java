package io.sparkgate.yaml;

import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Byte sizes and durations as the configuration writes them: {@code 128MiB}, {@code 4 KiB}, {@code 50us}, {@code 5m}. */
public final class Units {
  private static final Pattern SIZE =
      Pattern.compile("(\\d+)\\s*(b|kib|kb|mib|mb|gib|gb)?", Pattern.CASE_INSENSITIVE);
  private static final Pattern DURATION =
      Pattern.compile("(\\d+)\\s*(us|ms|s|m|h|d)", Pattern.CASE_INSENSITIVE);

  private Units() {}

  /**
   * The bytes a text such as {@code 134217728} or {@code 128MiB} states; empty if it is no size.
   *
   * @throws ArithmeticException past a long: out of range, never a size wrapped around into range
   */
  static OptionalLong bytes(String text) {
    Matcher m = SIZE.matcher(text.trim());
    if (!m.matches()) return OptionalLong.empty();
    try {
      return OptionalLong.of(Math.multiplyExact(Long.parseLong(m.group(1)), unit(m.group(2))));
    } catch (NumberFormatException e) {
      throw new ArithmeticException("beyond a long: " + text);
    }
  }

  /**
   * The duration a text such as {@code 50us} or {@code 30s} states; empty if it is no duration.
   *
   * @throws ArithmeticException past what a {@link Duration} holds
   */
  static Optional<Duration> duration(String text) {
    Matcher m = DURATION.matcher(text.trim());
    if (!m.matches()) return Optional.empty();
    try {
      long n = Long.parseLong(m.group(1));
      return Optional.of(
          switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "us" -> Duration.ofNanos(Math.multiplyExact(n, 1000L));
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofDays(n);
          });
    } catch (NumberFormatException e) {
      throw new ArithmeticException("beyond a long: " + text);
    }
  }

  /** A duration as the configuration writes it, in the largest unit that states it exactly: 50us, 2ms, 5m. */
  public static String human(Duration d) {
    long nanos;
    try {
      nanos = d.toNanos();
    } catch (ArithmeticException beyondNanos) {
      return d.toDays() + "d";
    }
    String[] units = {"d", "h", "m", "s", "ms", "us"};
    long[] sizes = {
      86_400_000_000_000L, 3_600_000_000_000L, 60_000_000_000L, 1_000_000_000L, 1_000_000L, 1_000L
    };
    for (int i = 0; i < units.length; i++) {
      if (nanos != 0 && nanos % sizes[i] == 0) {
        return nanos / sizes[i] + units[i];
      }
    }
    return nanos == 0 ? "0s" : nanos + "ns";
  }

  private static long unit(String suffix) {
    if (suffix == null) {
      return 1;
    }
    return switch (suffix.toLowerCase(Locale.ROOT)) {
      case "kib", "kb" -> 1024L;
      case "mib", "mb" -> 1024L * 1024;
      case "gib", "gb" -> 1024L * 1024 * 1024;
      default -> 1;
    };
  }
}
