package io.gpudirect.options;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.gpu.GpuEnvironment;
import io.gpudirect.gpu.GpuResources;
import io.gpudirect.spark.LocalSessions;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The Spark conf's executor settings size the GPU resources a context makes, on a real GPU. */
@Tag("gpu")
class ExecutorSettingsGpuTest {
  @Test
  void theSparkConfSizesThePinnedPoolAndTheDeviceLimits() {
    assumeTrue(GpuEnvironment.get().gpu() && GpuEnvironment.get().cudf(),
        "skipped: needs a GPU and cuDF (" + GpuEnvironment.get().reason() + ")");
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
