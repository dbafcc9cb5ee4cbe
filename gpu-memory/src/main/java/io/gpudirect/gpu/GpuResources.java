package io.gpudirect.gpu;

import io.gpudirect.memory.BufferAllocator;
import java.time.Duration;
import java.util.Optional;

/**
 * The pinned pool, copy engine and device allocator this JVM's GPU reads share: pinned memory
 * is scarce and a registration is slow, so one pool serves every reader, and one allocator
 * node ({@code root/device}) holds every read's device bytes under one limit. Made on first
 * use, released at exit.
 */
public final class GpuResources {
  /** 16 chunks of 4 MiB: enough in flight to keep several streams and the copy engine busy. */
  static final int CHUNKS = 16;
  static final int CHUNK_SIZE = 4 << 20;
  static final Duration ACQUIRE_TIMEOUT = Duration.ofSeconds(60);
  /**
   * Bytes of device memory this JVM's reads may hold at once ({@code -Dgpudirect.deviceMemoryLimit=N});
   * unlimited by default, since RMM (or the RAPIDS plugin's pool) already bounds the GPU.
   */
  static final long DEVICE_LIMIT = Long.getLong("gpudirect.deviceMemoryLimit", Long.MAX_VALUE);

  private static GpuResources shared;

  private final PinnedChunkPool pool;
  private final CopyEngine engine;
  private final DeviceAllocator device;

  private GpuResources(PinnedChunkPool pool, CopyEngine engine, DeviceAllocator device) {
    this.pool = pool;
    this.engine = engine;
    this.device = device;
  }

  public static synchronized GpuResources shared() {
    if (shared == null) {
      BufferAllocator allocator = BufferAllocator.root().newChildAllocator("gpu", (long) CHUNKS * CHUNK_SIZE);
      PinnedChunkPool pool = PinnedChunkPool.forThisJvm(allocator, CHUNKS, CHUNK_SIZE, ACQUIRE_TIMEOUT);
      CopyEngine engine = new CopyEngine();
      DeviceAllocator device = new DeviceAllocator(BufferAllocator.root().newChildAllocator("device", DEVICE_LIMIT));
      shared = new GpuResources(pool, engine, device);
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        engine.close();
        pool.close();
        allocator.close();
      }, "gpudirect-gpu-resources-shutdown"));
    }
    return shared;
  }

  /**
   * The shared resources if some reader has made them, without making them: leak checks look
   * at the pool only when it exists, since making it would pin memory on a host with no GPU.
   */
  public static synchronized Optional<GpuResources> ifCreated() {
    return Optional.ofNullable(shared);
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
}
