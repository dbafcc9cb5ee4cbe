package io.gpudirect.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import io.gpudirect.dataset.DataFormat;
import io.gpudirect.gpu.GpuEnvironment;
import io.gpudirect.options.ResolvedOptions;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The output rule of docs/configuration.md, for executors with and without a GPU. */
class OutputTest {
  private static final GpuEnvironment GPU = new GpuEnvironment(true, 1, "NVIDIA H200", true, "1 device");
  private static final GpuEnvironment CPU = new GpuEnvironment(false, 0, null, false, "no CUDA driver");

  @Test
  void autoDecodesParquetOnTheGpuWhereThereIsOneAndNothingElse() {
    assertTrue(Output.AUTO.gpuDecodes(DataFormat.PARQUET, GPU), "measured faster on the H200");
    assertFalse(Output.AUTO.gpuDecodes(DataFormat.ARROW_FILE, GPU), "CPU consumers gain nothing");
    assertFalse(Output.AUTO.gpuDecodes(DataFormat.ARROW_STREAM, GPU));
    assertFalse(Output.AUTO.gpuDecodes(DataFormat.PARQUET, CPU));
    assertFalse(Output.HOST.gpuDecodes(DataFormat.PARQUET, GPU));
    assertTrue(Output.GPU.gpuDecodes(DataFormat.ARROW_FILE, GPU));
  }

  @Test
  void gpuWithoutAGpuFailsNamingWhy() {
    GpuDirectException e = assertThrows(GpuDirectException.class, () -> Output.GPU.gpuDecodes(DataFormat.PARQUET, CPU));
    assertTrue(e.getMessage().contains("output=gpu needs a GPU and cuDF") && e.getMessage().contains("no CUDA driver"),
        e.getMessage());
  }

  @Test
  void valuesAreCaseInsensitiveAndAWrongOneIsNamed() {
    assertEquals(Output.GPU, Output.of(ResolvedOptions.resolve(Map.of("output", " Gpu "), k -> null).output()));
    assertEquals(Output.AUTO, Output.of(ResolvedOptions.resolve(Map.of(), k -> null).output()));
    GpuDirectException e = assertThrows(GpuDirectException.class,
        () -> Output.of(ResolvedOptions.resolve(Map.of("output", "device"), k -> null).output()));
    assertTrue(e.getMessage().contains("'device'"), e.getMessage());
  }
}
