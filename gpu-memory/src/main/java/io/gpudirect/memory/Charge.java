package io.gpudirect.memory;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Bytes charged to a {@link BufferAllocator} for memory that something else allocates
 * physically: RMM's device memory, Arrow's host memory, the direct buffer of a
 * {@link HostBuffer}. Until closed it counts against the allocator's limit and every
 * ancestor's, and it is listed in their leak reports under {@link #what()}. Closing it twice
 * is harmless: the second close finds nothing left to give back.
 */
public final class Charge implements AutoCloseable {
  private final BufferAllocator allocator;
  private final long bytes;
  private final String what;
  /** Where this charge was taken; only recorded when debug tracking is on. */
  final Throwable site;
  private final AtomicBoolean released = new AtomicBoolean();

  Charge(BufferAllocator allocator, long bytes, String what, Throwable site) {
    this.allocator = allocator;
    this.bytes = bytes;
    this.what = what;
    this.site = site;
  }

  public long bytes() {
    return bytes;
  }

  /** What the bytes are, as leak reports name them. */
  public String what() {
    return what;
  }

  public BufferAllocator allocator() {
    return allocator;
  }

  /** Gives the bytes back to the allocator's accounting (once). */
  @Override
  public void close() {
    if (released.compareAndSet(false, true)) {
      allocator.release(this);
    }
  }

  @Override
  public String toString() {
    return what + " (" + bytes + " bytes in '" + allocator.name() + "')";
  }
}
