package io.gpudirect.memory;

import io.gpudirect.GpuDirectException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A node of the allocator tree: a root and named children, each with a byte limit. An
 * allocation is charged to the allocator and every ancestor, and fails with
 * {@link AllocationLimitException} when any of them would pass its limit. Accounting (this
 * class, one {@link Charge} per allocation) is separate from the physical allocation: a direct
 * {@link ByteBuffer} per {@link HostBuffer} ({@link #allocate}), or memory another allocator
 * hands out and charges here through {@link #charge} (RMM device buffers through
 * {@code io.gpudirect.gpu.DeviceAllocator}, Arrow's host buffers through the connector's
 * allocation listener).
 *
 * <p>Closing an allocator that still has live buffers or open children throws
 * {@link MemoryLeakException} naming how many and how many bytes. With the system property
 * {@code gpudirect.memory.debug=true} each buffer remembers where it was allocated, and leak
 * reports include those stack traces.
 *
 * <p>Thread-safe.
 */
public final class BufferAllocator implements AutoCloseable {
  private static final boolean DEBUG = Boolean.getBoolean("gpudirect.memory.debug");
  private static final BufferAllocator ROOT = new BufferAllocator(null, "root", Long.MAX_VALUE);

  private final BufferAllocator parent;
  private final String name;
  private final long limit;
  private final AtomicLong used = new AtomicLong();
  /** Bytes freed at close so far ({@link #freedBytes}). */
  private final AtomicLong freed = new AtomicLong();
  private final Set<Charge> live = ConcurrentHashMap.newKeySet();
  private final Set<BufferAllocator> children = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  private BufferAllocator(BufferAllocator parent, String name, long limit) {
    if (limit < 0) {
      throw new IllegalArgumentException("Allocator '" + name + "' limit must be >= 0: " + limit);
    }
    this.parent = parent;
    this.name = parent == null ? name : parent.name + "/" + name;
    this.limit = limit;
  }

  /** The process-wide root, unlimited and never closed. Hang per-component children off it. */
  public static BufferAllocator root() {
    return ROOT;
  }

  /** A separate root with its own limit, for a component or a test that wants isolation. */
  public static BufferAllocator newRoot(String name, long limit) {
    return new BufferAllocator(null, name, limit);
  }

  /** A child charged to this allocator, with its own (smaller or equal) limit. */
  public BufferAllocator newChildAllocator(String childName, long childLimit) {
    checkOpen();
    BufferAllocator child = new BufferAllocator(this, childName, childLimit);
    children.add(child);
    return child;
  }

  /** Allocates a direct buffer of {@code size} bytes, owned by the caller, who closes it. */
  public HostBuffer allocate(int size) {
    return allocate(size, "direct buffer");
  }

  /**
   * As {@link #allocate(int)}, the buffer named {@code what} in leak reports ("TCP inbox of the
   * connection to HOST:PORT", ...).
   */
  public HostBuffer allocate(int size, String what) {
    return allocate(size, what, false);
  }

  /**
   * As {@link #allocate(int, String)}, the memory freed at the buffer's last close, not left
   * to the JVM: for buffers made and dropped at a high rate (a shuffle block's windows), whose
   * memory the JVM would hold until a collection, the process growing meanwhile, each new buffer
   * faulting fresh pages in, and allocations stalling in {@code System.gc()} once
   * {@code -XX:MaxDirectMemorySize} is reached. 400 blocks of 1 MiB over one stream on loopback
   * came at 0.22 GB/s left to the JVM and 0.78 GB/s freed at close ({@code ShuffleFetchBenchmark},
   * 2-core build VM, docs/benchmarks.md). Only for an owner whose every user is done with the
   * memory at its last close: a view touched after it reads or writes freed memory.
   */
  public HostBuffer allocateFreedAtClose(int size, String what) {
    return allocate(size, what, true);
  }

  private HostBuffer allocate(int size, String what, boolean freedAtClose) {
    if (size < 0) {
      throw new IllegalArgumentException("Cannot allocate a negative size from allocator '"
          + name + "': " + size);
    }
    Charge charge = charge(size, what);
    ByteBuffer memory;
    try {
      memory = ByteBuffer.allocateDirect(size);
    } catch (OutOfMemoryError e) {
      charge.close();
      throw new GpuDirectException("Allocator '" + name + "' could not get " + size
          + " bytes of direct memory from the JVM (-XX:MaxDirectMemorySize)", e);
    }
    return new HostBuffer(charge, memory, freedAtClose);
  }

  /**
   * Charges {@code bytes} that something else allocates (or is about to) to this allocator and
   * its ancestors, failing with {@link AllocationLimitException} when any would pass its
   * limit. The caller closes the charge when that memory is freed.
   *
   * @param what names the memory in leak reports ("Arrow IPC body of FILE", ...)
   */
  public Charge charge(long bytes, String what) {
    if (bytes < 0) {
      throw new IllegalArgumentException("Cannot charge a negative size to allocator '"
          + name + "': " + bytes);
    }
    checkOpen();
    reserve(bytes, what);
    Charge charge = new Charge(this, bytes, what, DEBUG ? new Throwable("charged here") : null);
    live.add(charge);
    return charge;
  }

  public String name() {
    return name;
  }

  public long limit() {
    return limit;
  }

  /** Bytes held by live buffers of this allocator and all its children. */
  public long outstandingBytes() {
    return used.get();
  }

  /**
   * Bytes of memory freed so far by buffers of this allocator and its children allocated with
   * {@link #allocateFreedAtClose}, each counted once its owners and holds have all let go. Memory
   * left to the collector is never counted: this tells the one from the other, where the charge
   * ({@link #outstandingBytes}) goes back at close either way.
   */
  public long freedBytes() {
    return freed.get();
  }

  /** Live buffers and other charges of this allocator and all its children. */
  public long outstandingBuffers() {
    long n = live.size();
    for (BufferAllocator child : children) {
      n += child.outstandingBuffers();
    }
    return n;
  }

  /**
   * Throws {@link MemoryLeakException} when any buffer of this allocator or a child is still
   * alive. Tests call it at the end (e.g. {@code BufferAllocator.root().assertNoLeaks()}).
   */
  public void assertNoLeaks() {
    long bytes = outstandingBytes();
    long buffers = outstandingBuffers();
    if (bytes != 0 || buffers != 0) {
      throw new MemoryLeakException("Allocator '" + name + "' leaked " + buffers
          + " buffer(s) holding " + bytes + " bytes" + outstanding(), buffers, bytes);
    }
  }

  /**
   * One line per live charge of this allocator and its children (what it is, its bytes and
   * allocator), with where it was taken when debug tracking is on: the body of a leak report.
   */
  public String outstanding() {
    StringBuilder sb = new StringBuilder();
    collectSites(sb);
    if (!DEBUG && sb.length() > 0) {
      sb.append("\n  (run with -Dgpudirect.memory.debug=true to see where they were allocated)");
    }
    return sb.toString();
  }

  /**
   * Closes this allocator. Fails with {@link MemoryLeakException} when buffers or child
   * allocators are still open; the allocator stays open then, so the caller can clean up.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    if (this == ROOT) {
      throw new GpuDirectException("The process-wide root allocator cannot be closed");
    }
    if (!children.isEmpty()) {
      List<String> names = new ArrayList<>();
      children.forEach(c -> names.add(c.name));
      throw new MemoryLeakException("Cannot close allocator '" + name + "': child allocators "
          + names + " are still open, holding " + outstandingBytes() + " bytes",
          outstandingBuffers(), outstandingBytes());
    }
    if (!live.isEmpty()) {
      long buffers = live.size();
      long bytes = outstandingBytes();
      throw new MemoryLeakException("Cannot close allocator '" + name + "': " + buffers
          + " buffer(s) holding " + bytes + " bytes are still open" + outstanding(), buffers, bytes);
    }
    closed = true;
    if (parent != null) {
      parent.children.remove(this);
    }
  }

  void release(Charge charge) {
    if (live.remove(charge)) {
      unreserve(charge.bytes());
    }
  }

  void countFreed(long bytes) {
    for (BufferAllocator a = this; a != null; a = a.parent) {
      a.freed.addAndGet(bytes);
    }
  }

  private void reserve(long bytes, String what) {
    BufferAllocator failedAt = null;
    long usedThere = 0;
    BufferAllocator a = this;
    for (; a != null; a = a.parent) {
      long after = a.used.addAndGet(bytes);
      if (after > a.limit) {
        failedAt = a;
        usedThere = after - bytes;
        break;
      }
    }
    if (failedAt != null) {
      for (BufferAllocator b = this; b != failedAt.parent; b = b.parent) {
        b.used.addAndGet(-bytes);
      }
      throw new AllocationLimitException(failedAt.name, what, bytes, usedThere, failedAt.limit);
    }
  }

  private void unreserve(long bytes) {
    for (BufferAllocator a = this; a != null; a = a.parent) {
      a.used.addAndGet(-bytes);
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new GpuDirectException("Allocator '" + name + "' is closed");
    }
  }

  private void collectSites(StringBuilder sb) {
    int listed = 0;
    for (Charge c : live) {
      if (listed++ == 20) {
        sb.append("\n  ...");
        break;
      }
      sb.append("\n  ").append(c);
      if (c.site != null) {
        for (StackTraceElement e : c.site.getStackTrace()) {
          sb.append("\n    at ").append(e);
        }
      }
    }
    children.forEach(child -> child.collectSites(sb));
  }

  @Override
  public String toString() {
    return "BufferAllocator[" + name + ", used " + used.get() + " of " + limit + "]";
  }
}
