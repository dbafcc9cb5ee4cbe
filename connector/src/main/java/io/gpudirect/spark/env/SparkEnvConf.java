package io.gpudirect.spark.env;

import io.gpudirect.options.RunningSparkConf;
import java.util.Map;
import java.util.TreeMap;
import scala.Tuple2;

/**
 * The running Spark's conf through {@code SparkEnv}, for the Spark-free packages
 * ({@code META-INF/services} names it). Each look-up is guarded: in a JVM without Spark on the
 * class path, or before Spark has started, it finds nothing.
 */
public final class SparkEnvConf implements RunningSparkConf {
  @Override
  public String get(String key) {
    try {
      org.apache.spark.SparkEnv env = org.apache.spark.SparkEnv.get();
      return env == null ? null : env.conf().get(key, null);
    } catch (NoClassDefFoundError e) {
      return null;
    }
  }

  @Override
  public Map<String, String> withPrefix(String prefix) {
    Map<String, String> found = new TreeMap<>();
    try {
      org.apache.spark.SparkEnv env = org.apache.spark.SparkEnv.get();
      if (env != null) {
        for (Tuple2<String, String> kv : env.conf().getAllWithPrefix(prefix)) {
          found.put(kv._1(), kv._2());
        }
      }
    } catch (NoClassDefFoundError e) {
      // No Spark in this JVM: nothing found.
    }
    return found;
  }
}
