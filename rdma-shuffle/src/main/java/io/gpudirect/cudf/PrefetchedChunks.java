package io.gpudirect.cudf;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DataSource;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.HostMemoryBuffer;
import io.gpudirect.gpu.DeviceAllocator;
import io.gpudirect.memory.AllocationLimitException;
import java.io.IOException;

/**
 * A remote file whose column chunks were fetched into device memory before cuDF decodes it:
 * cuDF's device reads that fall inside a fetched range are copies within the GPU, and anything
 * else (the footer, a range the plan did not list) is read from the file as before.
 *
 * <p>Why: a GPU engine admits a few tasks at a time to the GPU (the RAPIDS Accelerator's
 * semaphore), and cuDF pulls a file's bytes while it decodes. Fetched first, every task's bytes
 * are on the wire at once, and only the decode waits for admission.
 *
 * <p>Owns the file source and the fetched bytes, and closes both.
 */
public final class PrefetchedChunks extends DataSource {
  private final DataSource file;
  private final DeviceMemoryBuffer fetched;
  /** Offset and length pairs in the file, in file order, not overlapping. */
  private final long[] ranges;
  /** Where each range starts in {@link #fetched}. */
  private final long[] at;

  private PrefetchedChunks(DataSource file, DeviceMemoryBuffer fetched, long[] ranges) {
    this.file = file;
    this.fetched = fetched;
    this.ranges = ranges;
    this.at = new long[ranges.length / 2];
    for (int i = 1; i < at.length; i++) {
      at[i] = at[i - 1] + ranges[2 * i - 1];
    }
  }

  /**
   * {@code file} with {@code ranges} fetched into a buffer from {@code allocator}; {@code file}
   * itself, fetching nothing, where there are no bytes to fetch or the allocator has no room
   * for them now (the decode then reads as it goes, as without this). Takes ownership of
   * {@code file}: the source returned closes it, or this does if the fetch fails.
   *
   * @param ranges offset and length pairs, in file order, not overlapping; may be null
   * @param what names the buffer in leak reports
   */
  public static DataSource fetch(RemoteFileDataSource file, long[] ranges, DeviceAllocator allocator, String what) {
    try {
      if (ranges == null || ranges.length == 0) {
        return file;
      }
      long total = 0;
      for (int i = 1; i < ranges.length; i += 2) {
        total += ranges[i];
      }
      if (total == 0) {
        return file;
      }
      DeviceMemoryBuffer buffer;
      try {
        buffer = allocator.allocate(total, what);
      } catch (AllocationLimitException full) {
        return file;
      }
      try {
        file.deviceReadRanges(ranges, buffer);
      } catch (RuntimeException e) {
        buffer.close();
        throw e;
      }
      return new PrefetchedChunks(file, buffer, ranges);
    } catch (RuntimeException e) {
      file.close();
      throw e;
    }
  }

  @Override
  public long size() {
    return file.size();
  }

  @Override
  public HostMemoryBuffer hostRead(long offset, long amount) throws IOException {
    return file.hostRead(offset, amount);
  }

  @Override
  public long hostRead(long offset, HostMemoryBuffer dest) throws IOException {
    return file.hostRead(offset, dest);
  }

  @Override
  public boolean supportsDeviceRead() {
    return true;
  }

  @Override
  public long getDeviceReadCutoff() {
    return file.getDeviceReadCutoff();
  }

  @Override
  public long deviceRead(long offset, DeviceMemoryBuffer dest, Cuda.Stream stream) throws IOException {
    long n = Math.max(0, Math.min(dest.getLength(), size() - offset));
    int i = rangeHolding(offset, n);
    if (i < 0) {
      return file.deviceRead(offset, dest, stream);
    }
    dest.copyFromDeviceBufferAsync(0, fetched, at[i] + offset - ranges[2 * i], n, stream);
    // As the file's own device reads: the bytes have landed when this returns, and the fetched
    // buffer may be freed once cuDF is done, whichever stream frees it.
    stream.sync();
    return n;
  }

  /** The range that holds all of [offset, offset + n), or -1. */
  private int rangeHolding(long offset, long n) {
    int lo = 0;
    int hi = at.length - 1;
    int found = -1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      if (ranges[2 * mid] <= offset) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found >= 0 && offset + n <= ranges[2 * found] + ranges[2 * found + 1] ? found : -1;
  }

  @Override
  public void close() {
    try {
      fetched.close();
    } finally {
      file.close();
    }
  }
}
