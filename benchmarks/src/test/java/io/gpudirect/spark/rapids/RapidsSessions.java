package io.gpudirect.spark.rapids;

import java.util.Optional;
import org.apache.spark.sql.SparkSession;

/**
 * The session settings of the benchmarks that run the RAPIDS Accelerator: the plugin itself,
 * {@code format("gpudirect")}'s device pass-through (our extensions), and the plugin's own reader
 * over {@code gpudirect://} (the file system, with {@code gpudirect} among its cloud schemes, as
 * the quickstart advises). Here because {@link RapidsPlugin} is package-private.
 */
public final class RapidsSessions {
  private RapidsSessions() {}

  /** The plugin's version when its jar is on the class path. */
  public static Optional<String> pluginVersion() {
    return RapidsPlugin.version();
  }

  /**
   * {@code builder} with the plugin's settings; {@code plugin} false leaves the plugin itself out
   * (a dry run on the CPU through the same code).
   */
  public static SparkSession.Builder configure(SparkSession.Builder builder, boolean plugin) {
    return builder
        .config("spark.plugins", plugin ? "com.nvidia.spark.SQLPlugin" : "")
        .config("spark.sql.extensions", GpuDirectRapidsExtensions.class.getName())
        .config("spark.hadoop.fs.gpudirect.impl", "io.gpudirect.hadoop.GpuDirectFileSystem")
        .config("spark.rapids.cloudSchemes", "gpudirect")
        .config("spark.rapids.sql.enabled", "true")
        .config("spark.rapids.memory.gpu.allocFraction", "0.5")
        .config("spark.rapids.memory.pinnedPool.size", "4g");
  }
}
