package io.gpudirect.gpu;

import ai.rapids.cudf.DeviceMemoryBuffer;

/**
 * Device memory with one owner. From RMM when cuDF is loaded, so that cuDF can take the
 * buffer over as a column's data; from {@code cudaMalloc} otherwise.
 */
public final class DeviceBuffer implements AutoCloseable {
  private final long address;
  private final long length;
  /** Null for cudaMalloc'd memory. */
  private final DeviceMemoryBuffer rmm;
  private boolean closed;

  private DeviceBuffer(long address, long length, DeviceMemoryBuffer rmm) {
    this.address = address;
    this.length = length;
    this.rmm = rmm;
  }

  public static DeviceBuffer allocate(long length) {
    if (GpuEnvironment.get().cudf()) {
      DeviceMemoryBuffer b = DeviceMemoryBuffer.allocate(length);
      return new DeviceBuffer(b.getAddress(), length, b);
    }
    return new DeviceBuffer(Cuda.malloc(length), length, null);
  }

  public long address() {
    return address;
  }

  public long length() {
    return length;
  }

  /** The RMM buffer, for handing to cuDF; null when cuDF is not loaded. */
  public DeviceMemoryBuffer rmm() {
    return rmm;
  }

  /** Copies {@code dst.remaining()} bytes from {@code offset} to a direct host buffer; blocking. */
  public void copyToHost(long offset, java.nio.ByteBuffer dst) {
    if (offset < 0 || offset + dst.remaining() > length) {
      throw new IndexOutOfBoundsException("Cannot copy " + dst.remaining() + " bytes at " + offset
          + " of a " + length + "-byte device buffer");
    }
    Cuda.copyToHost(dst, address + offset, dst.remaining());
    dst.position(dst.limit());
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (rmm != null) {
      rmm.close();
    } else {
      Cuda.free(address);
    }
  }
}
