package io.gpudirect.spark;

import io.gpudirect.GpuDirectException;
import io.gpudirect.gpu.GpuEnvironment;
import io.gpudirect.options.GpuDirectOption;
import io.gpudirect.options.ResolvedOptions;
import java.util.Locale;

/**
 * Option {@code output}: where a scan's batches are decoded and where they live. The rule for
 * {@code auto} is written down in docs/configuration.md with the figures that chose it.
 */
enum Output {
  AUTO, GPU, HOST;

  static Output of(ResolvedOptions options) {
    String v = options.get(GpuDirectOption.OUTPUT);
    try {
      return valueOf(v.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new GpuDirectException("Invalid value '" + v + "' for option output: expected auto, gpu or host");
    }
  }

  /**
   * Whether this executor decodes {@code format} on the GPU. CPU Spark operators gain nothing
   * from a round trip through the GPU, and the RAPIDS plugin copies third-party batches value
   * by value through host getters, so {@code auto} gives host batches, except where decoding
   * on the GPU and copying the decoded columns back measured faster than Spark's CPU decoder.
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
      case AUTO -> format == DataFormat.PARQUET && env.gpu() && env.cudf() && PARQUET_GPU_DECODE_WINS;
    };
  }

  /** From the H200 measurement in docs/benchmarks.md ("Parquet: GPU decode or CPU decode"). */
  static final boolean PARQUET_GPU_DECODE_WINS = false;
}
