package io.gpudirect.spark;

import org.apache.spark.sql.SparkSession;

/**
 * The local Spark every connector test starts from: {@code cores} executor threads in this
 * JVM, no web UI, the driver on loopback (as the test servers are). Each test adds its own
 * settings before {@code getOrCreate()}.
 */
public final class LocalSessions {
  private LocalSessions() {}

  public static SparkSession.Builder builder(String appName, int cores) {
    return SparkSession.builder()
        .appName(appName)
        .master("local[" + cores + "]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1");
  }
}
