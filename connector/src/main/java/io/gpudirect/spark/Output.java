package io.gpudirect.spark;

import io.gpudirect.GpuDirectException;
import io.gpudirect.dataset.DataFormat;
import io.gpudirect.gpu.GpuEnvironment;
import java.util.Locale;

/**
 * Option {@code output}: where a scan's batches are decoded and where they live. The rule for
 * {@code auto} is written down in docs/configuration.md with the figures that chose it.
 */
enum Output {
  AUTO, GPU, HOST;

  /** The value of option {@code output}, in any case. */
  static Output of(String v) {
    try {
      return valueOf(v.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new GpuDirectException("Invalid value '" + v + "' for option output: expected auto, gpu or host");
    }
  }

  /**
   * Whether this executor decodes {@code format} on the GPU. CPU Spark operators gain nothing
   * from a round trip through the GPU, and the RAPIDS plugin copies third-party batches value
   * by value through host getters, so {@code auto} gives host batches, except for Parquet on
   * an executor with a GPU: decoding there, copying the decoded batch to pinned host memory
   * and reading every value through Spark's getters measured 2.0 to 3.2 times as fast as
   * Spark's CPU decoder on the H200 (docs/benchmarks.md, "Parquet: GPU decode or CPU decode").
   */
  boolean gpuDecodes(DataFormat format, GpuEnvironment env) {
    return switch (this) {
      case HOST -> false;
      case GPU -> {
        if (!env.gpu() || !env.cudf()) {
          throw new GpuDirectException("output=gpu needs a GPU and cuDF on every executor, but this one has"
              + " none: " + env.reason() + ". Use output=auto or output=host");
        }
        yield true;
      }
      case AUTO -> format == DataFormat.PARQUET && env.gpu() && env.cudf();
    };
  }
}
