package io.gpudirect.spark.rapids;

import io.gpudirect.spark.DeviceEngine;
import org.apache.spark.SparkConf;

/** The RAPIDS Accelerator as a scan sees it: on, with or without {@link GpuDirectRapidsExtensions}. */
public final class RapidsEngine implements DeviceEngine {
  /**
   * The plugin on and our pass-through rule not: the rule cannot be added from a scan, as a
   * session's columnar rules are fixed when it is made.
   */
  @Override
  public String setupNote(SparkConf conf) {
    String extensions = GpuDirectRapidsExtensions.class.getName();
    boolean withoutPassThrough = pluginOn(conf) && !conf.get("spark.sql.extensions", "").contains(extensions);
    return withoutPassThrough ? " note: the RAPIDS Accelerator is on, but " + extensions
        + " is not in spark.sql.extensions: batches take the plugin's host-to-GPU copy" : "";
  }

  /** The RAPIDS Accelerator is in {@code conf}'s {@code spark.plugins}. */
  public static boolean pluginOn(SparkConf conf) {
    return conf.get("spark.plugins", "").contains("com.nvidia.spark.SQLPlugin");
  }
}
