package io.gpudirect.options;

import io.gpudirect.GpuDirectException;
import java.io.Serializable;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.network.util.JavaUtils;

/**
 * The value of every option after precedence is applied: read option, then session conf,
 * then default. Small and serializable, so it travels with the scan to executors.
 */
public final class ResolvedOptions implements Serializable {
  private static final long serialVersionUID = 1L;

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ResolvedOptions.class);
  /** Warnings already given in this JVM: a read resolves its options on every executor and task. */
  private static final java.util.Set<String> WARNED = java.util.concurrent.ConcurrentHashMap.newKeySet();

  private final EnumMap<GpuDirectOption, String> values;

  private ResolvedOptions(EnumMap<GpuDirectOption, String> values) {
    this.values = values;
  }

  /**
   * @param readOptions the options given to the reader (keys matched case-insensitively)
   * @param sessionConf looks up a session conf key ({@code spark.gpudirect.*}), or returns null
   */
  public static ResolvedOptions resolve(Map<String, String> readOptions, Function<String, String> sessionConf) {
    Map<String, String> lower = new java.util.HashMap<>();
    readOptions.forEach((k, v) -> lower.put(k.toLowerCase(Locale.ROOT), v));
    EnumMap<GpuDirectOption, String> values = new EnumMap<>(GpuDirectOption.class);
    for (GpuDirectOption o : GpuDirectOption.values()) {
      String v = lower.get(o.key().toLowerCase(Locale.ROOT));
      if (v == null) {
        v = sessionConf.apply(o.sessionKey());
      }
      values.put(o, v == null ? o.defaultValue() : v.trim());
    }
    return new ResolvedOptions(values);
  }

  public String get(GpuDirectOption o) {
    return values.get(o);
  }

  public int getInt(GpuDirectOption o) {
    try {
      return Integer.parseInt(get(o));
    } catch (NumberFormatException e) {
      throw invalid(o, "a whole number", e);
    }
  }

  /** A size such as {@code 64m} or {@code 1g}, in Spark's notation. */
  public long getBytes(GpuDirectOption o) {
    try {
      return JavaUtils.byteStringAsBytes(get(o));
    } catch (RuntimeException e) {
      throw invalid(o, "a size such as 64m or 1g", e);
    }
  }

  /**
   * A duration in Spark's notation ({@code 30s}, {@code 500ms}, {@code 2min}, {@code 1h}), as
   * Spark's own time settings take it. A bare number is milliseconds, as in Spark; for a
   * timeout below a second that is rarely meant, so it is warned about once.
   */
  public java.time.Duration getDuration(GpuDirectOption o) {
    String v = get(o);
    long ms;
    try {
      ms = JavaUtils.timeStringAsMs(v);
    } catch (RuntimeException e) {
      throw invalid(o, "a duration such as 30s, 500ms or 2min", e);
    }
    if (o.isTimeout() && ms < 1000 && v.chars().allMatch(Character::isDigit)) {
      String warning = "Option " + o.key() + "=" + v + " has no unit and is read as " + v
          + " ms; write " + v + "s for seconds, or " + v + "ms to keep milliseconds";
      if (WARNED.add(warning)) {
        LOG.warn(warning);
      }
    }
    return java.time.Duration.ofMillis(ms);
  }

  public boolean getBoolean(GpuDirectOption o) {
    String v = get(o).toLowerCase(Locale.ROOT);
    if (!v.equals("true") && !v.equals("false")) {
      throw invalid(o, "true or false", null);
    }
    return Boolean.parseBoolean(v);
  }

  private GpuDirectException invalid(GpuDirectOption o, String expected, Throwable cause) {
    return new GpuDirectException("Invalid value '" + get(o) + "' for option " + o.key()
        + " (session key " + o.sessionKey() + "): expected " + expected, cause);
  }
}
