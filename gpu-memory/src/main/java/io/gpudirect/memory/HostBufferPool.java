package io.gpudirect.memory;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Direct buffers of one size, lent and given back again, charged to one {@link BufferAllocator}
 * all the while: for memory taken per message or per read, so that it is not allocated (zeroed,
 * faulted in) and later unmapped each time, which interrupts every core of the process. At most
 * {@code maxIdle} wait idle for the next taker; more given back are closed.
 *
 * <p>Idle buffers are held by the pool, not leaked: leak checks count a pool's
 * {@link #idleBytes()} as its own until the pool is closed ({@link #open()} lists those not
 * closed yet). Closing it closes the idle buffers; a buffer given back later is closed then.
 * Their memory goes to the collector, or, in a pool made by {@link #freedAtClose}, is freed when
 * the pool closes a buffer and every {@link HostBuffer.Hold} on it is closed.
 *
 * <p>Thread-safe.
 */
public final class HostBufferPool implements AutoCloseable {
  /** Those not closed yet, for leak checks only: nothing takes buffers through this set. */
  private static final Set<HostBufferPool> OPEN = ConcurrentHashMap.newKeySet();

  private final BufferAllocator allocator;
  private final String what;
  private final int bufferBytes;
  private final int maxIdle;
  private final boolean freedAtClose;
  private final ArrayDeque<HostBuffer> idle = new ArrayDeque<>();
  /** Buffers taken and not given back yet. */
  private long lent;
  private boolean closed;

  /**
   * @param what names the buffers in leak reports ("read-ahead piece", ...)
   * @param maxIdle most buffers kept idle for the next taker
   */
  public HostBufferPool(BufferAllocator allocator, String what, int bufferBytes, int maxIdle) {
    this(allocator, what, bufferBytes, maxIdle, false);
  }

  /**
   * As the constructor, its buffers allocated with {@link BufferAllocator#allocateFreedAtClose}:
   * for buffers that nobody touches once the pool or their taker has closed them, but under a
   * {@link HostBuffer#hold}.
   */
  public static HostBufferPool freedAtClose(BufferAllocator allocator, String what, int bufferBytes,
      int maxIdle) {
    return new HostBufferPool(allocator, what, bufferBytes, maxIdle, true);
  }

  private HostBufferPool(BufferAllocator allocator, String what, int bufferBytes, int maxIdle,
      boolean freedAtClose) {
    if (bufferBytes <= 0 || maxIdle < 0) {
      throw new IllegalArgumentException("A pool of " + what + " needs buffers of a positive size"
          + " and no negative idle count: " + bufferBytes + " bytes, " + maxIdle + " idle");
    }
    this.allocator = allocator;
    this.what = what;
    this.bufferBytes = bufferBytes;
    this.maxIdle = maxIdle;
    this.freedAtClose = freedAtClose;
    OPEN.add(this);
  }

  /** The pools not closed yet, for leak checks: their idle buffers are not a leak. */
  public static List<HostBufferPool> open() {
    return List.copyOf(OPEN);
  }

  /**
   * A buffer of {@link #bufferBytes()}: an idle one, or a new one charged to the allocator. The
   * taker gives it back.
   */
  public HostBuffer take() {
    synchronized (this) {
      HostBuffer b = idle.pollFirst();
      if (b != null) {
        lent++;
        return b;
      }
    }
    HostBuffer made = freedAtClose ? allocator.allocateFreedAtClose(bufferBytes, what)
        : allocator.allocate(bufferBytes, what);
    synchronized (this) {
      lent++;
    }
    return made;
  }

  /** Takes back {@code b}, which no one may use any more: kept idle if there is room, else closed. */
  public void give(HostBuffer b) {
    synchronized (this) {
      lent--;
      if (!closed && idle.size() < maxIdle && b.capacity() == bufferBytes) {
        // Last in, first out: the next taker gets the one most likely still in a cache.
        idle.addFirst(b);
        return;
      }
    }
    b.close();
  }

  public int bufferBytes() {
    return bufferBytes;
  }

  /** Bytes of the buffers taken and not given back yet. */
  public synchronized long lentBytes() {
    return lent * bufferBytes;
  }

  /** Bytes of the buffers waiting idle here. */
  public synchronized long idleBytes() {
    return (long) idle.size() * bufferBytes;
  }

  public BufferAllocator allocator() {
    return allocator;
  }

  /** Closes the idle buffers; those lent out are closed when given back. */
  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      while (!idle.isEmpty()) {
        idle.pollFirst().close();
      }
    }
    OPEN.remove(this);
  }

  @Override
  public String toString() {
    return "HostBufferPool[" + what + ", " + bufferBytes + " bytes each, " + idleBytes() + " idle, in '"
        + allocator.name() + "']";
  }
}
