package io.gpudirect.spark.cudf;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DataSource;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.HostMemoryBuffer;
import io.gpudirect.gpu.HostMemoryAllocator;
import java.io.IOException;

/**
 * A Parquet file as cuDF should see it when only some of its row groups are to be read:
 * the file's own bytes followed by a replacement footer that lists just those row groups.
 * Column chunks keep their absolute offsets, so cuDF's device reads of them go to the file
 * unchanged; only the tail is served from memory. cuDF's Java reader has no row-group
 * selection, and this keeps Spark's split of a file into slices exact on the GPU path.
 *
 * <p>Owns the delegate source and closes it. The host buffers it hands cuDF are charged to
 * {@code host} until cuDF closes them.
 */
public final class RowGroupView extends DataSource {
  private final DataSource file;
  private final long fileLength;
  private final byte[] tail;
  private final HostMemoryAllocator host;

  /** @param tail the replacement footer, its 4-byte little-endian length and "PAR1" */
  public RowGroupView(DataSource file, byte[] tail, HostMemoryAllocator host) {
    this.file = file;
    this.fileLength = file.size();
    this.tail = tail;
    this.host = host;
  }

  @Override
  public long size() {
    return fileLength + tail.length;
  }

  @Override
  public HostMemoryBuffer hostRead(long offset, long amount) throws IOException {
    long n = Math.max(0, Math.min(amount, size() - offset));
    HostMemoryBuffer buffer = host.allocate(n, "cuDF host read at offset " + offset + " of a row-group view");
    try {
      fill(offset, buffer, n);
      return buffer;
    } catch (IOException | RuntimeException e) {
      buffer.close();
      throw e;
    }
  }

  @Override
  public long hostRead(long offset, HostMemoryBuffer dest) throws IOException {
    long n = Math.max(0, Math.min(dest.getLength(), size() - offset));
    fill(offset, dest, n);
    return n;
  }

  private void fill(long offset, HostMemoryBuffer dest, long n) throws IOException {
    long fromFile = Math.max(0, Math.min(n, fileLength - offset));
    if (fromFile > 0) {
      try (HostMemoryBuffer part = dest.slice(0, fromFile)) {
        file.hostRead(offset, part);
      }
    }
    if (n > fromFile) {
      int at = (int) (offset + fromFile - fileLength);
      dest.setBytes(fromFile, tail, at, n - fromFile);
    }
  }

  @Override
  public boolean supportsDeviceRead() {
    return file.supportsDeviceRead();
  }

  @Override
  public long getDeviceReadCutoff() {
    return file.getDeviceReadCutoff();
  }

  @Override
  public long deviceRead(long offset, DeviceMemoryBuffer dest, Cuda.Stream stream) throws IOException {
    long n = Math.max(0, Math.min(dest.getLength(), size() - offset));
    if (offset + n <= fileLength) {
      return file.deviceRead(offset, dest, stream);
    }
    // Only a read that reaches into the replacement footer lands here: stage it on the host.
    try (HostMemoryBuffer staged = hostRead(offset, n)) {
      dest.copyFromHostBuffer(0, staged, 0, n, stream);
      stream.sync();
    }
    return n;
  }

  @Override
  public void close() {
    file.close();
  }
}
