package io.gpudirect.memory;

import io.gpudirect.GpuDirectException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A direct {@link ByteBuffer} charged to one {@link BufferAllocator}. It starts with one
 * reference, owned by whoever allocated it; {@link #retain()} adds one for another owner and
 * every owner calls {@link #close()} once. The last close returns the bytes to the allocator's
 * accounting. The memory itself is freed by the JDK when the {@code ByteBuffer} is collected,
 * or at that last close for a buffer allocated with {@link BufferAllocator#allocateFreedAtClose};
 * either way nobody may keep the result of {@link #nioBuffer()} past its own close.
 */
public final class HostBuffer implements AutoCloseable {
  private final Charge charge;
  private final BufferAllocator allocator;
  private final ByteBuffer buffer;
  private final AtomicInteger refCount = new AtomicInteger(1);
  private final boolean freedAtClose;

  HostBuffer(Charge charge, ByteBuffer buffer, boolean freedAtClose) {
    this.charge = charge;
    this.allocator = charge.allocator();
    this.buffer = buffer;
    this.freedAtClose = freedAtClose;
  }

  /** Capacity in bytes. */
  public int capacity() {
    return buffer.capacity();
  }

  /**
   * A fresh view of the whole buffer (position 0, limit capacity), sharing its memory.
   * Valid until the last reference is closed.
   */
  public ByteBuffer nioBuffer() {
    checkLive();
    return buffer.duplicate().clear();
  }

  /** The allocator this buffer is charged to. */
  public BufferAllocator allocator() {
    return allocator;
  }

  public int refCount() {
    return refCount.get();
  }

  /** Adds a reference for another owner, who must close it once. */
  public HostBuffer retain() {
    while (true) {
      int current = refCount.get();
      if (current <= 0) {
        throw new GpuDirectException("Cannot retain a closed buffer of " + capacity()
            + " bytes from allocator '" + allocator.name() + "'");
      }
      if (refCount.compareAndSet(current, current + 1)) {
        return this;
      }
    }
  }

  /** Drops one reference; the last one returns the bytes to the allocator (and frees them, where asked). */
  @Override
  public void close() {
    int left = refCount.decrementAndGet();
    if (left == 0) {
      charge.close();
      if (freedAtClose) {
        DirectMemory.free(buffer);
      }
    } else if (left < 0) {
      refCount.incrementAndGet();
      throw new GpuDirectException("Buffer of " + capacity() + " bytes from allocator '"
          + allocator.name() + "' closed more often than it was retained");
    }
  }

  private void checkLive() {
    if (refCount.get() <= 0) {
      throw new GpuDirectException("Buffer of " + capacity() + " bytes from allocator '"
          + allocator.name() + "' is already closed");
    }
  }
}
