package io.gpudirect.gpu;

import io.gpudirect.GpuDirectException;

/**
 * The sizes of a JVM's GPU reads, fixed when it makes its {@link GpuResources}: every reader
 * of the JVM shares one pinned pool and one device allocator, so these are the executor's, not
 * a read's. The connector reads them ({@code io.gpudirect.options.ExecutorSettings}): from the
 * executors' Spark conf ({@code spark.gpudirect.X}), or {@code -Dgpudirect.X} in a JVM without
 * Spark.
 *
 * @param pinnedChunks registered 4 MiB chunks the socket reads into and the copy engine copies
 *     out of: 16 keep the default 4 streams and the copy engine busy; on the H200, 8 streams
 *     with a 192 MiB bytes-in-flight window gained from 128 (docs/benchmarks.md)
 * @param deviceMemoryLimit bytes of device memory the reads may hold at once; unlimited by
 *     default, since RMM (or the RAPIDS plugin's pool) already bounds the GPU
 * @param prefetchFraction share of the GPU's memory that bytes fetched ahead of their decode may
 *     hold: they are fetched before the GPU engine admits the task, outside the limits it keeps,
 *     so they get a small bound of their own
 */
public record GpuSettings(int pinnedChunks, long deviceMemoryLimit, double prefetchFraction) {
  public static final String PINNED_CHUNKS = "pinnedChunks";
  public static final String DEVICE_MEMORY_LIMIT = "deviceMemoryLimit";
  public static final String PREFETCH_FRACTION = "prefetchFraction";
  public static final GpuSettings DEFAULTS = new GpuSettings(16, Long.MAX_VALUE, 0.125);
  /** 64 GiB of pinned chunks: past that a typo (a size for a count) would lock the host's memory. */
  static final int MAX_PINNED_CHUNKS = (int) ((64L << 30) / GpuResources.CHUNK_SIZE);

  public GpuSettings {
    // The pool overlaps a read into one chunk with the copy out of another.
    check(pinnedChunks >= 2 && pinnedChunks <= MAX_PINNED_CHUNKS, PINNED_CHUNKS, pinnedChunks,
        "a number of 4 MiB pinned chunks between 2 and " + MAX_PINNED_CHUNKS);
    check(deviceMemoryLimit > 0, DEVICE_MEMORY_LIMIT, deviceMemoryLimit, "a positive number of bytes");
    check(prefetchFraction > 0 && prefetchFraction <= 1, PREFETCH_FRACTION, prefetchFraction,
        "a share of the GPU's memory above 0 and at most 1");
  }

  private static void check(boolean ok, String name, Number value, String what) {
    if (!ok) {
      throw new GpuDirectException("gpudirect setting " + name + "=" + value + " is not " + what
          + " (spark.gpudirect." + name + " in the executors' Spark conf, or -Dgpudirect." + name
          + " in a JVM without Spark)");
    }
  }
}
