package io.gpudirect.options;

import io.gpudirect.GpuDirectException;
import io.gpudirect.SparkNotation;
import io.gpudirect.gpu.GpuSettings;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The settings an executor fixes once, for every read it runs: its pinned pool, the device and
 * host memory its readers may hold. A read's options cannot change them (one pool serves every
 * task), so they come from the executor's Spark conf ({@code --conf spark.gpudirect.pinnedChunks=128}
 * on {@code spark-submit}, or spark-defaults.conf), as the RAPIDS plugin's pool sizes do. A JVM
 * without Spark ({@code GpuDirect.readTable}, the CLI) takes {@code -Dgpudirect.X}; where both
 * are given, the Spark conf wins. Names are case-insensitive, as every gpudirect option.
 */
public final class ExecutorSettings {
  private static final String HOST_COPY_PINNED_POOL_BYTES = "hostCopyPinnedPoolBytes";
  private static final String ARROW_MEMORY_LIMIT = "arrowMemoryLimit";
  /** In the order docs/configuration.md lists them. */
  static final List<String> NAMES = List.of(GpuSettings.PINNED_CHUNKS, GpuSettings.DEVICE_MEMORY_LIMIT,
      GpuSettings.PREFETCH_FRACTION, HOST_COPY_PINNED_POOL_BYTES, ARROW_MEMORY_LIMIT);

  private ExecutorSettings() {}

  /** Each setting's key in the Spark conf, {@code spark.gpudirect.pinnedChunks} and so on. */
  public static List<String> sessionKeys() {
    return NAMES.stream().map(n -> GpuDirectOption.SESSION_PREFIX + n).toList();
  }

  /** The executor setting called {@code name} in any case, spelt as documented; null where none is. */
  static String named(String name) {
    return NAMES.stream().filter(n -> n.equalsIgnoreCase(name)).findFirst().orElse(null);
  }

  /** The sizes of this executor's GPU reads. */
  public static GpuSettings gpu() {
    GpuSettings unset = GpuSettings.DEFAULTS;
    return new GpuSettings(
        setting(GpuSettings.PINNED_CHUNKS, unset.pinnedChunks(), ExecutorSettings::count),
        setting(GpuSettings.DEVICE_MEMORY_LIMIT, unset.deviceMemoryLimit(), SparkNotation::bytes),
        setting(GpuSettings.PREFETCH_FRACTION, unset.prefetchFraction(), ExecutorSettings::fraction));
  }

  /**
   * Pinned host memory cuDF sets aside for the host copies of device batches (1 GiB; 0 for
   * none), unless its pool exists already.
   */
  public static long hostCopyPinnedPoolBytes() {
    return bytes(HOST_COPY_PINNED_POOL_BYTES, 1L << 30);
  }

  /** Bytes Arrow's host buffers may hold at once in this JVM; unlimited by default. */
  public static long arrowMemoryLimit() {
    return bytes(ARROW_MEMORY_LIMIT, Long.MAX_VALUE);
  }

  private static long bytes(String name, long unset) {
    return setting(name, unset, SparkNotation::bytes);
  }

  private static int count(String text) {
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a whole number of 4 MiB chunks");
    }
  }

  private static double fraction(String text) {
    try {
      return Double.parseDouble(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a fraction such as 0.25");
    }
  }

  /** The Spark conf's {@code spark.gpudirect.NAME}, else {@code -Dgpudirect.NAME}, else {@code unset}. */
  private static <T> T setting(String name, T unset, Function<String, T> parse) {
    String value = sparkSettings().get(name.toLowerCase(Locale.ROOT));
    if (value != null) {
      return parse(GpuDirectOption.SESSION_PREFIX + name, value, parse);
    }
    String property = System.getProperty("gpudirect." + name);
    return property == null ? unset : parse("-Dgpudirect." + name, property, parse);
  }

  private static <T> T parse(String key, String value, Function<String, T> parse) {
    try {
      return parse.apply(value.trim());
    } catch (IllegalArgumentException e) {
      throw new GpuDirectException(key + "=" + value + " is refused: " + e.getMessage(), e);
    }
  }

  /**
   * The executor's {@code spark.gpudirect.} settings by lower-case name; none where this JVM has
   * no Spark (not on the class path, or no SparkEnv yet).
   */
  private static Map<String, String> sparkSettings() {
    Map<String, String> byName = new TreeMap<>();
    SparkConfLookup.withPrefix(GpuDirectOption.SESSION_PREFIX)
        .forEach((name, value) -> byName.put(name.toLowerCase(Locale.ROOT), value));
    return byName;
  }
}
