package io.gpudirect;

import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Sizes ({@code 64m}, {@code 1g}) and durations ({@code 30s}, {@code 2min}) written as Spark
 * writes them in its own settings, so a user's habits carry over: in the read options and
 * executor settings, and on the command line. Here rather than Spark's {@code JavaUtils}: they
 * are read by code that runs without Spark too ({@code GpuDirect.readTable}, the server
 * package's commands), and {@code SparkNotationTest} holds this to Spark's parser on the same
 * inputs.
 */
public final class SparkNotation {
  private static final Pattern SIZE = Pattern.compile("([0-9]+)([a-z]+)?");
  private static final Pattern FRACTION = Pattern.compile("([0-9]+\\.[0-9]+)([a-z]+)?");
  private static final Pattern DURATION = Pattern.compile("(-?[0-9]+)([a-z]+)?");
  private static final Map<String, Integer> SIZE_SHIFTS = Map.ofEntries(
      Map.entry("b", 0), Map.entry("k", 10), Map.entry("kb", 10), Map.entry("m", 20),
      Map.entry("mb", 20), Map.entry("g", 30), Map.entry("gb", 30), Map.entry("t", 40),
      Map.entry("tb", 40), Map.entry("p", 50), Map.entry("pb", 50));
  private static final Map<String, TimeUnit> TIME_UNITS = Map.of(
      "us", TimeUnit.MICROSECONDS, "ms", TimeUnit.MILLISECONDS, "s", TimeUnit.SECONDS,
      "m", TimeUnit.MINUTES, "min", TimeUnit.MINUTES, "h", TimeUnit.HOURS, "d", TimeUnit.DAYS);

  private SparkNotation() {}

  /** Bytes of a size; a bare number is bytes. Fractions and overflow are refused. */
  public static long bytes(String text) {
    String s = text.toLowerCase(Locale.ROOT).trim();
    Matcher m = SIZE.matcher(s);
    if (m.matches()) {
      Integer shift = m.group(2) == null ? Integer.valueOf(0) : SIZE_SHIFTS.get(m.group(2));
      if (shift == null) {
        throw new IllegalArgumentException("Invalid suffix: \"" + m.group(2) + "\" in \"" + text
            + "\"; a size is bytes (b), kibibytes (k), mebibytes (m), gibibytes (g), tebibytes"
            + " (t) or pebibytes (p), e.g. 50b, 100k or 250m");
      }
      long value = Long.parseLong(m.group(1));
      if (shift > 0 && value > (Long.MAX_VALUE >> shift)) {
        throw new IllegalArgumentException("\"" + text + "\" is more bytes than a long holds");
      }
      return value << shift;
    }
    if (FRACTION.matcher(s).matches()) {
      throw new IllegalArgumentException("Fractional values are not supported: \"" + text + "\"");
    }
    throw new IllegalArgumentException("\"" + text + "\" is not a size such as 50b, 100k or 250m");
  }

  /** Milliseconds of a duration; a bare number is milliseconds. As Spark, saturates. */
  public static long millis(String text) {
    String s = text.toLowerCase(Locale.ROOT).trim();
    Matcher m = DURATION.matcher(s);
    if (!m.matches()) {
      throw new IllegalArgumentException("\"" + text + "\" is not a duration such as 50s, 100ms"
          + " or 2min");
    }
    TimeUnit unit = m.group(2) == null ? TimeUnit.MILLISECONDS : TIME_UNITS.get(m.group(2));
    if (unit == null) {
      throw new IllegalArgumentException("Invalid suffix: \"" + m.group(2) + "\" in \"" + text
          + "\"; a duration is in us, ms, s, m or min, h or d");
    }
    return TimeUnit.MILLISECONDS.convert(Long.parseLong(m.group(1)), unit);
  }
}
