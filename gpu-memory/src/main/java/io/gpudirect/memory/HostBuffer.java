package io.gpudirect.memory;

import io.gpudirect.GpuDirectException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A direct {@link ByteBuffer} charged to one {@link BufferAllocator}. It starts with one
 * reference, owned by whoever allocated it; {@link #retain()} adds one for another owner and
 * every owner calls {@link #close()} once. The last close returns the bytes to the allocator's
 * accounting. The memory itself is freed by the JDK when the {@code ByteBuffer} is collected,
 * or, for a buffer allocated with {@link BufferAllocator#allocateFreedAtClose}, once the last
 * owner has closed it and every {@link Hold} is closed too; either way nobody may keep the result
 * of {@link #nioBuffer()} past its own close.
 *
 * <p>A hold keeps the memory, not the charge: it is for a party that may still touch the memory
 * after its owners are done with it, such as an RDMA provider until it has released the endpoint
 * the memory is registered on. The owners' accounting then ends when they close, as it does for a
 * buffer left to the collector, and the memory is freed when that party lets go.
 */
public final class HostBuffer implements AutoCloseable {
  private final Charge charge;
  private final BufferAllocator allocator;
  private final ByteBuffer buffer;
  private final AtomicInteger refCount = new AtomicInteger(1);
  /** One for the owners together, while any has a reference, and one for each open hold. */
  private final AtomicInteger holds = new AtomicInteger(1);
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

  /**
   * Keeps the memory until the hold is closed, past the owners' last close; fails once every
   * owner has closed this buffer.
   */
  public Hold hold() {
    Hold h = tryHold();
    if (h == null) {
      throw alreadyClosed();
    }
    return h;
  }

  /**
   * A {@link #hold} closed when {@code done} completes, normally or not: for memory that someone
   * outside this JVM's control (a provider, a worker) may touch until then, past the owners' close.
   */
  public void holdUntil(CompletionStage<?> done) {
    Hold h = hold();
    done.whenComplete((result, failure) -> h.close());
  }

  /**
   * A hold on the memory, or null when the owners have all closed this buffer: for work that
   * may race with the owners' close and must not touch freed memory.
   */
  public Hold tryHold() {
    while (true) {
      int current = holds.get();
      // refCount first: a hold is only for a buffer still owned; holds > 0 is what keeps the
      // memory, so a hold won by the compare-and-set below is safe even if the owners close now.
      if (refCount.get() <= 0 || current <= 0) {
        return null;
      }
      if (holds.compareAndSet(current, current + 1)) {
        return new Hold();
      }
    }
  }

  /** Drops one reference; the last one returns the bytes to the allocator (and frees them, where asked). */
  @Override
  public void close() {
    int left = refCount.decrementAndGet();
    if (left == 0) {
      charge.close();
      letGo();
    } else if (left < 0) {
      refCount.incrementAndGet();
      throw new GpuDirectException("Buffer of " + capacity() + " bytes from allocator '"
          + allocator.name() + "' closed more often than it was retained");
    }
  }

  private void letGo() {
    if (holds.decrementAndGet() == 0 && freedAtClose) {
      DirectMemory.free(buffer);
      allocator.countFreed(buffer.capacity());
    }
  }

  /** Keeps the buffer's memory (not its charge) until closed; closing twice is harmless. */
  public final class Hold implements AutoCloseable {
    private final AtomicBoolean open = new AtomicBoolean(true);

    private Hold() {
    }

    @Override
    public void close() {
      if (open.compareAndSet(true, false)) {
        letGo();
      }
    }
  }

  private void checkLive() {
    if (refCount.get() <= 0) {
      throw alreadyClosed();
    }
  }

  private GpuDirectException alreadyClosed() {
    return new GpuDirectException("Buffer of " + capacity() + " bytes from allocator '"
        + allocator.name() + "' is already closed");
  }
}
