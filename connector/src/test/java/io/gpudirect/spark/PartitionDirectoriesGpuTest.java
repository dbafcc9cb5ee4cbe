package io.gpudirect.spark;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import ai.rapids.cudf.Rmm;
import ai.rapids.cudf.RmmAllocationMode;
import io.gpudirect.gpu.GpuEnvironment;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * Every case of {@link PartitionDirectoriesTest} again with output=gpu: the files' columns are
 * decoded by cuDF (Parquet) or made into cuDF columns (Arrow) on the GPU, and the partition
 * columns still come as each file's constants, with the same rows as spark.read.parquet.
 */
@Tag("gpu")
class PartitionDirectoriesGpuTest extends PartitionDirectoriesTest {
  @BeforeAll
  static void needsAGpu() {
    assumeTrue(GpuEnvironment.get().gpu() && GpuEnvironment.get().cudf(),
        "skipped: needs a GPU and cuDF (" + GpuEnvironment.get().reason() + ")");
    if (!Rmm.isInitialized()) {
      Rmm.initialize(RmmAllocationMode.CUDA_DEFAULT, null, 0);
    }
  }

  @Override
  protected String output() {
    return "gpu";
  }
}
