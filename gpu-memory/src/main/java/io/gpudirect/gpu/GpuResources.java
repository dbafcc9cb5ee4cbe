package io.gpudirect.gpu;

import ai.rapids.cudf.Cuda;
import io.gpudirect.memory.BufferAllocator;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The GPU context of a JVM's reads: the pinned pool, copy engine, device allocator and cuDF
 * host allocator they share. Pinned memory is scarce and a registration is slow, so one pool
 * serves every reader, and one allocator node ({@code device}) holds every read's device bytes
 * under one limit. Spark executors, the CLI and {@code GpuDirect.readTable} use the JVM's
 * ({@link #shared}), made on first use and given back at exit; whoever {@link #create}s one
 * owns it and closes it. The network client's context knows none of it.
 */
public final class GpuResources implements AutoCloseable {
  static final int CHUNK_SIZE = 4 << 20;
  static final Duration ACQUIRE_TIMEOUT = Duration.ofSeconds(60);
  /** Those not closed yet, for leak checks only: nothing reads through this set. */
  private static final Set<GpuResources> OPEN = ConcurrentHashMap.newKeySet();
  private static GpuResources shared;

  private final BufferAllocator pinned;
  private final PinnedChunkPool pool;
  private final CopyEngine engine;
  private final DeviceAllocator device;
  private final DeviceAllocator prefetch;
  private final HostMemoryAllocator host;
  private final AtomicBoolean closed = new AtomicBoolean();

  private GpuResources(BufferAllocator pinned, PinnedChunkPool pool, CopyEngine engine,
      DeviceAllocator device, DeviceAllocator prefetch, HostMemoryAllocator host) {
    this.pinned = pinned;
    this.pool = pool;
    this.engine = engine;
    this.device = device;
    this.prefetch = prefetch;
    this.host = host;
  }

  /** The JVM's, of the default sizes ({@link GpuSettings#DEFAULTS}) if it is made now. */
  public static GpuResources shared() {
    return shared(() -> GpuSettings.DEFAULTS);
  }

  /**
   * The JVM's, made on first use with the settings {@code settings} gives then (pinning memory
   * and starting the copy engine only where something reads into the GPU); later calls get the
   * same one until it is closed. It is given back at exit.
   */
  public static synchronized GpuResources shared(Supplier<GpuSettings> settings) {
    if (shared == null || shared.closed.get()) {
      GpuResources made = create(settings.get());
      Runtime.getRuntime().addShutdownHook(new Thread(made::close, "gpudirect-gpu-resources-shutdown"));
      shared = made;
    }
    return shared;
  }

  /**
   * Registers the pinned pool and starts the copy engine, sized by {@code settings}; the caller
   * closes what it gets. Where there is no GPU it throws, having given back the pool it pinned.
   */
  public static GpuResources create(GpuSettings settings) {
    return create(settings, CHUNK_SIZE);
  }

  /** With chunks of {@code chunkSize} bytes: tests take small ones, so that small files take several copies. */
  static GpuResources create(GpuSettings settings, int chunkSize) {
    int chunks = settings.pinnedChunks();
    BufferAllocator pinned = BufferAllocator.root().newChildAllocator("gpu", (long) chunks * chunkSize);
    PinnedChunkPool pool = null;
    try {
      pool = PinnedChunkPool.forThisJvm(pinned, chunks, chunkSize, ACQUIRE_TIMEOUT);
      CopyEngine engine = new CopyEngine();
      BufferAllocator deviceBytes = BufferAllocator.root().newChildAllocator("device", settings.deviceMemoryLimit());
      long prefetchLimit = (long) (Cuda.memGetInfo().total * settings.prefetchFraction());
      GpuResources made = new GpuResources(pinned, pool, engine, new DeviceAllocator(deviceBytes),
          new DeviceAllocator(deviceBytes.newChildAllocator("prefetch", prefetchLimit)),
          new HostMemoryAllocator(BufferAllocator.root().newChildAllocator("gpu-host", Long.MAX_VALUE)));
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

  /**
   * Where reads get (and charge) the cuDF host buffers they hand to cuDF or stage through: a
   * footer, decompressed bytes on their way to the device.
   */
  public HostMemoryAllocator host() {
    return host;
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
