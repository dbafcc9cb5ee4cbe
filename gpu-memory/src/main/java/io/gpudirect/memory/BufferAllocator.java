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
 * class) is separate from the physical allocation ({@link #allocate}), which is one direct
 * {@link ByteBuffer} per {@link HostBuffer}.
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
  private final Set<HostBuffer> live = ConcurrentHashMap.newKeySet();
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
    if (size < 0) {
      throw new IllegalArgumentException("Cannot allocate a negative size from allocator '"
          + name + "': " + size);
    }
    checkOpen();
    reserve(size);
    ByteBuffer memory;
    try {
      memory = ByteBuffer.allocateDirect(size);
    } catch (OutOfMemoryError e) {
      unreserve(size);
      throw new GpuDirectException("Allocator '" + name + "' could not get " + size
          + " bytes of direct memory from the JVM (-XX:MaxDirectMemorySize)", e);
    }
    HostBuffer buffer = new HostBuffer(this, memory,
        DEBUG ? new Throwable("allocated here") : null);
    live.add(buffer);
    return buffer;
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

  /** Live buffers of this allocator and all its children. */
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
          + " buffer(s) holding " + bytes + " bytes" + sites(), buffers, bytes);
    }
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
          + " buffer(s) holding " + bytes + " bytes are still open" + sites(), buffers, bytes);
    }
    closed = true;
    if (parent != null) {
      parent.children.remove(this);
    }
  }

  void release(HostBuffer buffer) {
    if (live.remove(buffer)) {
      unreserve(buffer.capacity());
    }
  }

  private void reserve(long bytes) {
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
      throw new AllocationLimitException(failedAt.name, bytes, usedThere, failedAt.limit);
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

  private String sites() {
    if (!DEBUG) {
      return " (run with -Dgpudirect.memory.debug=true to see where they were allocated)";
    }
    StringBuilder sb = new StringBuilder();
    collectSites(sb);
    return sb.toString();
  }

  private void collectSites(StringBuilder sb) {
    for (HostBuffer b : live) {
      if (b.allocationSite != null) {
        sb.append("\n  ").append(b.capacity()).append(" bytes ");
        for (StackTraceElement e : b.allocationSite.getStackTrace()) {
          sb.append("\n    at ").append(e);
        }
      }
    }
    children.forEach(c -> c.collectSites(sb));
  }

  @Override
  public String toString() {
    return "BufferAllocator[" + name + ", used " + used.get() + " of " + limit + "]";
  }
}
