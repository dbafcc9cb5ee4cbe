package io.gpudirect.cudf;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.HostMemoryBuffer;
import io.gpudirect.GpuDirectException;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.gpu.CopyEngine;
import io.gpudirect.gpu.PinnedChunk;
import io.gpudirect.gpu.PinnedChunkPool;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A remote file as cuDF's {@link ai.rapids.cudf.DataSource}: cuDF's readers
 * ({@code Table.readParquet(options, source)} and the others) ask it for byte ranges, and
 * only those ranges cross the wire. Device reads go socket → pinned chunk → GPU, with the
 * copy of one chunk overlapping the arrival of the next; host reads (footers) go straight
 * into cuDF's host buffer.
 *
 * <p>The store, pool and engine are shared and stay open; this source owns none of them.
 */
public final class RemoteFileDataSource extends ai.rapids.cudf.DataSource {
  private final RemoteStore store;
  private final String path;
  private final long size;
  private final PinnedChunkPool pool;
  private final CopyEngine engine;

  public RemoteFileDataSource(RemoteStore store, String path, long size, PinnedChunkPool pool, CopyEngine engine) {
    this.store = store;
    this.path = path;
    this.size = size;
    this.pool = pool;
    this.engine = engine;
  }

  @Override
  public long size() {
    return size;
  }

  @Override
  public HostMemoryBuffer hostRead(long offset, long amount) {
    long n = clamp(offset, amount);
    HostMemoryBuffer buffer = HostMemoryBuffer.allocate(n);
    try {
      fill(buffer, offset, n);
      return buffer;
    } catch (RuntimeException e) {
      buffer.close();
      throw e;
    }
  }

  @Override
  public long hostRead(long offset, HostMemoryBuffer dest) {
    long n = clamp(offset, dest.getLength());
    fill(dest, offset, n);
    return n;
  }

  @Override
  public boolean supportsDeviceRead() {
    return true;
  }

  /**
   * Fills {@code dest} from {@code offset}. cuDF may use the buffer on {@code stream} as soon
   * as this returns, so every copy has landed by then.
   */
  @Override
  public long deviceRead(long offset, DeviceMemoryBuffer dest, Cuda.Stream stream) {
    long n = clamp(offset, dest.getLength());
    // GPUDirect RDMA: the NIC writes into dest, no host copy. False when the store cannot
    // (TCP, or GPU memory not registrable); then socket -> pinned chunk -> GPU below.
    if (n > 0 && store.readIntoDevice(path, offset, dest.getAddress(), n)) {
      return n;
    }
    List<CompletableFuture<Void>> copies = new ArrayList<>();
    // The first failure of any chunk, seen at once instead of by rescanning every future.
    AtomicReference<Throwable> failed = new AtomicReference<>();
    long done = 0;
    while (done < n && failed.get() == null) {
      int len = (int) Math.min(pool.chunkSize(), n - done);
      PinnedChunk chunk = pool.acquire();
      long at = done;
      ByteBuffer view = chunk.view();
      view.limit(len);
      // The socket fills the chunk; then the engine owns it and gives it back after the copy.
      CompletableFuture<Void> copy = store.readAsync(path, offset + at, view)
          .handle((v, err) -> {
            if (err != null) {
              chunk.close();
              throw err instanceof CompletionException ce ? ce : new CompletionException(err);
            }
            return chunk;
          })
          .thenCompose(c -> engine.copyToDevice(c, len, dest.getAddress() + at));
      copy.whenComplete((v, err) -> {
        if (err != null) {
          failed.compareAndSet(null, err instanceof CompletionException ce && ce.getCause() != null ? ce.getCause() : err);
        }
      });
      copies.add(copy);
      done += len;
    }
    RuntimeException failure = null;
    // Wait for every read and copy, even after a failure: none may write into dest later.
    for (CompletableFuture<Void> c : copies) {
      try {
        c.join();
      } catch (CompletionException e) {
        if (failure == null) {
          failure = asRuntime(e.getCause());
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
    // Each copy's future completes only once its event has fired, so every byte has landed.
    // No engine-wide synchronize here: it would make concurrent tasks wait for each other's copies.
    return n;
  }

  private static RuntimeException asRuntime(Throwable t) {
    return t instanceof RuntimeException r ? r : new GpuDirectException(String.valueOf(t.getMessage()), t);
  }

  private void fill(HostMemoryBuffer buffer, long offset, long n) {
    long done = 0;
    while (done < n) {
      int len = (int) Math.min(Integer.MAX_VALUE - 8, n - done);
      store.read(path, offset + done, buffer.asByteBuffer(done, len));
      done += len;
    }
  }

  private long clamp(long offset, long amount) {
    if (offset < 0 || offset > size) {
      throw new GpuDirectException("Cannot read '" + path + "' at offset " + offset + ": the file has " + size + " bytes");
    }
    return Math.min(amount, size - offset);
  }
}
