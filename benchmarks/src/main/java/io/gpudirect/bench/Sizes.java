package io.gpudirect.bench;

import java.util.Locale;

/** Byte sizes as people write them on a command line: 4096, 64k, 256m, 4g (powers of 1024). */
final class Sizes {
  private Sizes() {}

  static long parse(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    long unit = 1;
    char last = t.isEmpty() ? ' ' : t.charAt(t.length() - 1);
    switch (last) {
      case 'k' -> unit = 1L << 10;
      case 'm' -> unit = 1L << 20;
      case 'g' -> unit = 1L << 30;
      default -> { }
    }
    String digits = unit == 1 ? t : t.substring(0, t.length() - 1);
    try {
      long v = Long.parseLong(digits);
      if (v <= 0) {
        throw new NumberFormatException();
      }
      return Math.multiplyExact(v, unit);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException("Not a positive size: '" + text
          + "' (write bytes, or a number with k, m or g)");
    }
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
