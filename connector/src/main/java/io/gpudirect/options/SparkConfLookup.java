package io.gpudirect.options;

import java.util.Map;
import java.util.ServiceLoader;

/**
 * The running Spark's conf ({@link RunningSparkConf}), found once; where no provider is on the
 * class path, every look-up finds nothing, as in a JVM without Spark.
 */
public final class SparkConfLookup {
  private static final RunningSparkConf CONF = ServiceLoader
      .load(RunningSparkConf.class, RunningSparkConf.class.getClassLoader())
      .findFirst()
      .orElse(null);

  private SparkConfLookup() {}

  /** The value of {@code key} in the running Spark's conf; null without Spark or the key. */
  public static String get(String key) {
    return CONF == null ? null : CONF.get(key);
  }

  /** The running Spark's keys that start with {@code prefix}, without it; empty without Spark. */
  public static Map<String, String> withPrefix(String prefix) {
    return CONF == null ? Map.of() : CONF.withPrefix(prefix);
  }
}
