package io.gpudirect.options;

import static org.junit.jupiter.api.Assertions.assertEquals;


import io.gpudirect.gpu.GpuResources;
import io.gpudirect.gpu.GpuTest;
import io.gpudirect.spark.LocalSessions;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/** The Spark conf's executor settings size the GPU resources a context makes, on a real GPU. */
@GpuTest
class ExecutorSettingsGpuTest {
  @Test
  void theSparkConfSizesThePinnedPoolAndTheDeviceLimits() {
    SparkSession spark = LocalSessions.builder("executor-settings-gpu", 1)
        .config("spark.gpudirect.pinnedChunks", "24")
        .config("spark.gpudirect.deviceMemoryLimit", "6g")
        .getOrCreate();
    try (GpuResources gpu = GpuResources.create(ExecutorSettings.gpu())) {
      assertEquals(24L << 22, gpu.pool().heldBytes(), "24 pinned chunks of 4 MiB");
      assertEquals(6L << 30, gpu.device().accounts().limit());
      assertEquals(true, gpu.pool().isRegistered());
    } finally {
      LocalSessions.stop(spark, null);
    }
  }
}
