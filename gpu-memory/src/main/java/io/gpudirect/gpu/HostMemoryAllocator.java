package io.gpudirect.gpu;

import ai.rapids.cudf.HostMemoryBuffer;
import io.gpudirect.memory.BufferAllocator;
import java.util.function.LongFunction;

/**
 * cuDF host buffers charged to a node of the allocator tree, as {@link DeviceAllocator}'s device
 * buffers are: a footer handed to cuDF's reader, bytes staged on their way to the device. cuDF
 * allocates them (pinned or pageable, as it prefers) and often closes them itself; the charge
 * goes back when the last reference, slices included, is closed, which cuDF reports through
 * the {@link ai.rapids.cudf.MemoryBuffer.EventHandler} set here.
 *
 * <p>Thread-safe.
 */
public final class HostMemoryAllocator {
  private final ChargedUntilLastClose<HostMemoryBuffer> buffers;

  /** Charges {@code accounts} (and its ancestors) for every buffer; cuDF allocates them. */
  public HostMemoryAllocator(BufferAllocator accounts) {
    this(accounts, HostMemoryBuffer::allocate);
  }

  /** @param cudf the physical allocation; tests without a GPU pass one that needs no CUDA */
  HostMemoryAllocator(BufferAllocator accounts, LongFunction<HostMemoryBuffer> cudf) {
    // cuDF's host buffers are found by nobody later: nothing to remember of them.
    this.buffers = new ChargedUntilLastClose<>(accounts, cudf, (buffer, charge) -> () -> { });
  }

  /** The allocator node charged. */
  public BufferAllocator accounts() {
    return buffers.accounts();
  }

  /**
   * A cuDF host buffer of {@code bytes}, charged until its last reference is closed; past a
   * limit it fails with {@link io.gpudirect.memory.AllocationLimitException} before cuDF is asked.
   *
   * @param what names the buffer in leak reports ("footer of FILE", ...)
   */
  public HostMemoryBuffer allocate(long bytes, String what) {
    return buffers.allocate(bytes, what);
  }
}
