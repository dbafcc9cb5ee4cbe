package io.gpudirect.gpu;

import ai.rapids.cudf.Cuda;
import io.gpudirect.GpuDirectException;
import io.gpudirect.memory.BufferAllocator;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The pinned pool, copy engine and device allocator that the GPU reads of one client context
 * share: pinned memory is scarce and a registration is slow, so one pool serves every reader,
 * and one allocator node ({@code device}) holds every read's device bytes under one limit.
 * Made and closed by its owner, {@code io.gpudirect.client.ClientContext} (on Spark executors
 * the JVM's shared context), never by a static of its own.
 */
public final class GpuResources implements AutoCloseable {
  static final int CHUNK_SIZE = 4 << 20;
  static final Duration ACQUIRE_TIMEOUT = Duration.ofSeconds(60);
  /**
   * Bytes of device memory these reads may hold at once ({@code -Dgpudirect.deviceMemoryLimit=N});
   * unlimited by default, since RMM (or the RAPIDS plugin's pool) already bounds the GPU.
   */
  static final long DEVICE_LIMIT = Long.getLong("gpudirect.deviceMemoryLimit", Long.MAX_VALUE);
  /**
   * Share of the GPU's memory that bytes fetched ahead of their decode may hold at once
   * ({@code -Dgpudirect.prefetchFraction=F}): they are fetched before the GPU engine admits the
   * task, outside the limits it keeps, so they get a small bound of their own.
   */
  static final double PREFETCH_FRACTION = Double.parseDouble(System.getProperty("gpudirect.prefetchFraction", "0.125"));
  /** Those not closed yet, for leak checks only: nothing reads through this set. */
  private static final Set<GpuResources> OPEN = ConcurrentHashMap.newKeySet();

  private final BufferAllocator pinned;
  private final PinnedChunkPool pool;
  private final CopyEngine engine;
  private final DeviceAllocator device;
  private final DeviceAllocator prefetch;
  private final AtomicBoolean closed = new AtomicBoolean();

  /**
   * Pinned chunks of 4 MiB ({@code -Dgpudirect.pinnedChunks=N}, 16 by default): enough to keep
   * the default 4 streams and the copy engine busy. On the H200, 8 streams with a 192 MiB
   * bytes-in-flight window gained from 128 (docs/benchmarks.md); pinned memory is the host's
   * to spare, so more is the operator's choice. Read when the resources are made, so that a
   * bad setting fails that, naming itself.
   */
  static int pinnedChunks(String setting) {
    if (setting == null) {
      return 16;
    }
    try {
      int n = Integer.parseInt(setting.trim());
      if (n >= 1 && (long) n * CHUNK_SIZE <= 64L << 30) {
        return n;
      }
    } catch (NumberFormatException e) {
      // said below
    }
    throw new GpuDirectException("-Dgpudirect.pinnedChunks=" + setting
        + " is not a number of 4 MiB pinned chunks between 1 and 16384");
  }

  private GpuResources(BufferAllocator pinned, PinnedChunkPool pool, CopyEngine engine,
      DeviceAllocator device, DeviceAllocator prefetch) {
    this.pinned = pinned;
    this.pool = pool;
    this.engine = engine;
    this.device = device;
    this.prefetch = prefetch;
  }

  /**
   * Registers the pinned pool and starts the copy engine; the caller closes what it gets.
   * Where there is no GPU it throws, having given back the pool it pinned.
   */
  public static GpuResources create() {
    int chunks = pinnedChunks(System.getProperty("gpudirect.pinnedChunks"));
    BufferAllocator pinned = BufferAllocator.root().newChildAllocator("gpu", (long) chunks * CHUNK_SIZE);
    PinnedChunkPool pool = null;
    try {
      pool = PinnedChunkPool.forThisJvm(pinned, chunks, CHUNK_SIZE, ACQUIRE_TIMEOUT);
      CopyEngine engine = new CopyEngine();
      BufferAllocator deviceBytes = BufferAllocator.root().newChildAllocator("device", DEVICE_LIMIT);
      long prefetchLimit = (long) (Cuda.memGetInfo().total * PREFETCH_FRACTION);
      GpuResources made = new GpuResources(pinned, pool, engine, new DeviceAllocator(deviceBytes),
          new DeviceAllocator(deviceBytes.newChildAllocator("prefetch", prefetchLimit)));
      OPEN.add(made);
      return made;
    } catch (RuntimeException e) {
      if (pool != null) {
        pool.close();
      }
      pinned.close();
      throw e;
    }
  }

  /**
   * The resources made and not closed yet, without making any: leak checks look at their
   * pools, since making one would pin memory on a host with no GPU.
   */
  public static List<GpuResources> open() {
    return List.copyOf(OPEN);
  }

  public PinnedChunkPool pool() {
    return pool;
  }

  public CopyEngine engine() {
    return engine;
  }

  /** Where reads get (and charge) their device buffers. */
  public DeviceAllocator device() {
    return device;
  }

  /**
   * Where bytes fetched ahead of their decode get their device buffers: a part of
   * {@link #device()} with a limit of its own, a share of the GPU's memory. A charge past it
   * fails at once, so a reader that cannot fetch ahead reads as it decodes instead of waiting.
   */
  public DeviceAllocator prefetch() {
    return prefetch;
  }

  /** Stops the copy engine and gives the pinned chunks back; device buffers stay with cuDF. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      OPEN.remove(this);
      engine.close();
      pool.close();
      pinned.close();
    }
  }
}
