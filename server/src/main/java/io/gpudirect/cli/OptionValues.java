package io.gpudirect.cli;

import io.gpudirect.GpuDirectException;
import io.gpudirect.SparkNotation;

/**
 * Numbers given on the command line, each checked against what its option accepts before
 * anything is served or asked: a value out of range is refused by a message that names the
 * option, the range and the value given (a buffer of 0 bytes was taken, and cat asked for
 * nothing, forever). Sizes are written as Spark writes its own ({@code 64k}, {@code 8m},
 * {@code 1g}; a bare number is bytes), so the habits of the read options serve here too.
 */
public final class OptionValues {
  private OptionValues() {}

  /** {@code value} of {@code option}, when it is from {@code min} to {@code max}. */
  public static int count(String option, int value, int min, int max) {
    return (int) count(option, (long) value, min, max);
  }

  /** {@code value} of {@code option}, when it is from {@code min} to {@code max}. */
  public static long count(String option, long value, long min, long max) {
    if (value < min || value > max) {
      throw new GpuDirectException(option + " must be a whole number from " + min + " to " + max
          + ", not " + value);
    }
    return value;
  }

  /** The bytes {@code text} (Spark's notation) says, when they are from {@code min} to {@code max}. */
  public static long size(String option, String text, long min, long max) {
    String range = option + " must be a size from " + show(min) + " to " + show(max) + " (bytes, or a"
        + " number with k, m or g as in Spark's settings: 64k, 8m), not " + text;
    long bytes;
    try {
      bytes = SparkNotation.bytes(text);
    } catch (IllegalArgumentException e) {
      throw new GpuDirectException(range + ": " + e.getMessage(), e);
    }
    if (bytes < min || bytes > max) {
      throw new GpuDirectException(range);
    }
    return bytes;
  }

  /** {@code bytes} in the largest unit that divides them: 4096 as 4k, 1073741824 as 1g. */
  static String show(long bytes) {
    String[] units = {"p", "t", "g", "m", "k"};
    for (int i = 0; i < units.length; i++) {
      int shift = 10 * (units.length - i);
      if (bytes != 0 && bytes % (1L << shift) == 0) {
        return (bytes >> shift) + units[i];
      }
    }
    return Long.toString(bytes);
  }
}
