package io.gpudirect.spark.env;

/**
 * The conf of this JVM's running Spark, for code that also runs without Spark (the
 * {@code gpudirect://} Hadoop file system): a class of its own, so that code never touches a
 * Spark class unless Spark is there, and its package stays free of Spark imports.
 */
public final class SparkConfLookup {
  private SparkConfLookup() {}

  /** The value of {@code key} in the running Spark's conf; null without Spark or the key. */
  public static String get(String key) {
    try {
      org.apache.spark.SparkEnv env = org.apache.spark.SparkEnv.get();
      return env == null ? null : env.conf().get(key, null);
    } catch (NoClassDefFoundError e) {
      return null;
    }
  }
}
