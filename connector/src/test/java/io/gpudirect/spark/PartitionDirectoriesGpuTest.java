package io.gpudirect.spark;

import ai.rapids.cudf.Rmm;
import ai.rapids.cudf.RmmAllocationMode;
import io.gpudirect.gpu.GpuTest;
import org.junit.jupiter.api.BeforeAll;

/**
 * Every case of {@link PartitionDirectoriesTest} again with output=gpu: the files' columns are
 * decoded by cuDF (Parquet) or made into cuDF columns (Arrow) on the GPU, and the partition
 * columns still come as each file's constants, with the same rows as spark.read.parquet.
 */
@GpuTest
class PartitionDirectoriesGpuTest extends PartitionDirectoriesTest {
  @BeforeAll
  static void initializeRmm() {
    if (!Rmm.isInitialized()) {
      Rmm.initialize(RmmAllocationMode.CUDA_DEFAULT, null, 0);
    }
  }

  @Override
  protected String output() {
    return "gpu";
  }
}
