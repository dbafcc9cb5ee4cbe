package io.gpudirect.options;

import java.util.Map;

/**
 * The conf of the Spark running in this JVM, as code that also runs without Spark reads it
 * (executor settings, the {@code gpudirect://} file system). {@code io.gpudirect.spark.env}
 * provides it through {@code META-INF/services}, so that no package outside
 * {@code io.gpudirect.spark} names a Spark class; {@link SparkConfLookup} finds it.
 */
public interface RunningSparkConf {
  /** The value of {@code key}; null without Spark, before Spark has started, or without the key. */
  String get(String key);

  /** Every key that starts with {@code prefix}, without it, and its value; empty without Spark. */
  Map<String, String> withPrefix(String prefix);
}
