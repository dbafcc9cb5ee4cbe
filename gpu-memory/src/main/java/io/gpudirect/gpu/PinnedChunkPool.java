package io.gpudirect.gpu;

import io.gpudirect.GpuDirectException;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fixed set of host chunks the socket reads into and the GPU copies out of. On a GPU each
 * chunk is registered with {@code cudaHostRegister}: copies from registered memory run at
 * PCIe speed (55 GB/s measured on an H200), from pageable memory at a tenth of that. In host
 * mode the chunks are plain direct buffers, and the pool says so once.
 *
 * <p>When every chunk is lent out, {@link #acquire} waits: that is the back-pressure that keeps
 * the network from outrunning the GPU. Past the timeout it fails with an error that says what
 * to change; it never falls back to pageable memory behind the caller's back.
 */
public final class PinnedChunkPool implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PinnedChunkPool.class);

  private final BufferAllocator allocator;
  private final List<PinnedChunk> all = new ArrayList<>();
  private final ArrayDeque<PinnedChunk> free = new ArrayDeque<>();
  private final boolean registered;
  private final int chunkSize;
  private final Duration timeout;
  /** The most chunks lent out at once since {@link #takePeakChunksInUse} last ran. */
  private int peakInUse;
  private boolean closed;

  /**
   * @param parent the allocator the chunks are charged to (a child named "pinned" is made)
   * @param register whether to register the chunks with CUDA (false in host mode)
   */
  public PinnedChunkPool(BufferAllocator parent, int chunks, int chunkSize, Duration timeout, boolean register) {
    if (chunks < 2) {
      throw new IllegalArgumentException("A pinned pool needs at least 2 chunks to overlap reads and copies, not " + chunks);
    }
    this.allocator = parent.newChildAllocator("pinned", (long) chunks * chunkSize);
    this.chunkSize = chunkSize;
    this.timeout = timeout;
    this.registered = register;
    try {
      for (int i = 0; i < chunks; i++) {
        HostBuffer b = allocator.allocate(chunkSize);
        PinnedChunk c = new PinnedChunk(this, b);
        all.add(c);
        if (register) {
          try {
            Cuda.hostRegister(c.memory);
          } catch (RuntimeException e) {
            all.remove(c);
            b.close();
            throw e;
          }
        }
        free.add(c);
      }
    } catch (RuntimeException e) {
      release();
      throw e;
    }
    if (!register) {
      LOG.info("Pinned pool in host mode: {} chunks of {} bytes are plain direct buffers, not registered with CUDA",
          chunks, chunkSize);
    }
  }

  /** A pool registered with CUDA when this JVM has a GPU, plain otherwise. */
  public static PinnedChunkPool forThisJvm(BufferAllocator parent, int chunks, int chunkSize, Duration timeout) {
    return new PinnedChunkPool(parent, chunks, chunkSize, timeout, GpuEnvironment.get().gpu());
  }

  /** Waits up to the pool's timeout for a free chunk. */
  public PinnedChunk acquire() {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (this) {
      while (free.isEmpty() && !closed) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new GpuDirectException("Pinned pool exhausted: all " + all.size() + " chunks of " + chunkSize
              + " bytes stayed in use for " + timeout.toMillis() + " ms. Raise the pool's chunk count or lower"
              + " the readers sharing it (this pool never falls back to pageable memory)");
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(this, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new GpuDirectException("Interrupted while waiting for a pinned chunk", e);
        }
      }
      if (closed) {
        throw new GpuDirectException("Pinned pool is closed");
      }
      PinnedChunk c = free.poll();
      peakInUse = Math.max(peakInUse, all.size() - free.size());
      return c;
    }
  }

  synchronized void giveBack(PinnedChunk c) {
    if (free.contains(c)) {
      throw new GpuDirectException("Pinned chunk given back twice");
    }
    // Last in, first out: the chunk given back last is the one most likely still in the CPU's
    // cache, so the next socket read into it and the GPU's read out of it avoid DRAM.
    free.push(c);
    notifyAll();
  }

  public boolean isRegistered() {
    return registered;
  }

  public int chunkSize() {
    return chunkSize;
  }

  /** Bytes the pool holds for its lifetime, lent out or free: what it charges its allocator. */
  public synchronized long heldBytes() {
    return (long) all.size() * chunkSize;
  }

  public synchronized int chunksInUse() {
    return all.size() - free.size();
  }

  /**
   * The most chunks lent out at once since the last call (or since the pool was made): how much
   * of the pool a workload needed. The count starts again from the chunks lent out now.
   */
  public synchronized int takePeakChunksInUse() {
    int peak = peakInUse;
    peakInUse = all.size() - free.size();
    return peak;
  }

  /** Unregisters and frees every chunk; fails, naming the count, if any is still lent out. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    notifyAll();
    int inUse = all.size() - free.size();
    if (inUse > 0) {
      throw new io.gpudirect.memory.MemoryLeakException("Pinned pool closed with " + inUse + " of " + all.size()
          + " chunks still in use", inUse, (long) inUse * chunkSize);
    }
    release();
  }

  private void release() {
    for (PinnedChunk c : all) {
      if (registered) {
        Cuda.hostUnregister(c.memory);
      }
      c.buffer.close();
    }
    all.clear();
    free.clear();
    allocator.close();
  }
}
