package io.gpudirect.spark;

import org.apache.spark.SparkConf;

/**
 * A GPU SQL engine that takes this source's device batches (the RAPIDS Accelerator:
 * {@code io.gpudirect.spark.rapids}), as a scan asks it before any of the engine's rules run.
 * Listed in {@code META-INF/services}, so that this package names no engine's class: the
 * engine's package imports this one, never the reverse.
 */
public interface DeviceEngine {
  /**
   * What explain() notes about a session with {@code conf} where the engine is on but the
   * hand-off to it is not set up, so that batches take the engine's own host-to-GPU copy;
   * empty where there is nothing to say.
   */
  String setupNote(SparkConf conf);
}
