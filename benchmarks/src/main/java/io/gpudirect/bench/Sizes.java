package io.gpudirect.bench;

import io.gpudirect.SparkNotation;
import java.util.Locale;

/**
 * Byte sizes as Spark writes them (4096, 64k, 256m, 4g: powers of 1024), for the profiling
 * tools' arguments and the bench's own constants; the bench's options are read with the CLI's
 * {@code OptionValues}, which name the option.
 */
final class Sizes {
  private Sizes() {}

  static long parse(String text) {
    long v;
    try {
      v = SparkNotation.bytes(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("Not a positive size: '" + text + "' (" + e.getMessage() + ")", e);
    }
    if (v <= 0) {
      throw new IllegalArgumentException("Not a positive size: '" + text + "' (write bytes, or a number with k, m or g)");
    }
    return v;
  }

  static String show(long bytes) {
    if (bytes >= 1L << 30 && bytes % (1L << 30) == 0) {
      return (bytes >> 30) + " GiB";
    }
    if (bytes >= 1L << 20) {
      return String.format(Locale.ROOT, "%.0f MiB", bytes / 1048576.0);
    }
    return bytes + " B";
  }
}
