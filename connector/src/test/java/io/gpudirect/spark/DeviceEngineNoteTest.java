package io.gpudirect.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/**
 * The note a scan puts in explain() where the RAPIDS Accelerator is on and gpudirect's
 * pass-through is not: found through the engines listed in META-INF/services.
 */
class DeviceEngineNoteTest {
  private static final String PLUGIN = "com.nvidia.spark.SQLPlugin";
  private static final String EXTENSIONS = "io.gpudirect.spark.rapids.GpuDirectRapidsExtensions";

  @Test
  void thePluginWithoutThePassThroughIsNoted() {
    assertEquals(" note: the RAPIDS Accelerator is on, but " + EXTENSIONS + " is not in spark.sql.extensions:"
        + " batches take the plugin's host-to-GPU copy", DeviceScans.setupNote(new SparkConf(false).set("spark.plugins", PLUGIN)));
  }

  @Test
  void thePluginWithThePassThroughOrNoPluginIsNot() {
    SparkConf both = new SparkConf(false).set("spark.plugins", PLUGIN).set("spark.sql.extensions", EXTENSIONS);
    assertEquals("", DeviceScans.setupNote(both));
    assertEquals("", DeviceScans.setupNote(new SparkConf(false)));
  }
}
