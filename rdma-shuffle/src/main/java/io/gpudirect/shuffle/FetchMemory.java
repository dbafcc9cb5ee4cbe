package io.gpudirect.shuffle;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.transport.BlockMemory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.TreeMap;

/**
 * The memory of one block while it is fetched: a buffer per window, taken from the allocator
 * when the window's answer has said its length (on the connection's reader thread), the same one
 * again for a retry of the same length, a new one for a retry that found another. Ends either
 * as a {@link FetchedBlock}, which owns the block's bytes from then on, or given back.
 *
 * <p>A window's memory is freed when it is given back, not when the JVM collects it: a reducer
 * makes and drops windows at the rate blocks arrive ({@link BufferAllocator#allocateFreedAtClose}
 * says what that cost). That is safe because nothing writes a window once its block's fetch has
 * ended: a transport completes a window's request only after its last byte is written (a
 * connection's reader alone fails what it was reading), and a block's fetch ends only when every
 * window's request has ({@code ChunkedReads.readBlock}); a {@link FetchedBlock} refuses reads once
 * closed.
 */
abstract sealed class FetchMemory implements BlockMemory permits BlockBytes, BlockDownload {
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

  final BufferAllocator allocator;
  final ShuffleBlockId block;
  /** By the window's offset within the block. */
  final Map<Long, HostBuffer> windows = new TreeMap<>();
  /** Fetched or given back: no window is bound any more. */
  boolean done;

  FetchMemory(BufferAllocator allocator, ShuffleBlockId block) {
    this.allocator = allocator;
    this.block = block;
  }

  @Override
  public synchronized ByteBuffer bind(ShuffleData answer) {
    if (done) {
      throw new IllegalStateException("the memory of shuffle block " + block.name() + " is no longer its fetch's");
    }
    HostBuffer kept = windows.get(answer.offset());
    if (kept != null && kept.capacity() == answer.length()) {
      return kept.nioBuffer();
    }
    if (kept != null) {
      windows.remove(answer.offset()).close();
    }
    if (answer.length() == 0) {
      return EMPTY.duplicate();
    }
    HostBuffer b = allocator.allocateFreedAtClose(answer.length(), "window of shuffle block " + block.name());
    windows.put(answer.offset(), b);
    return b.nioBuffer();
  }

  /**
   * The block, which owns its bytes from now on: every window of its {@code size} bytes is in,
   * {@code requestNanos} after its request went out. On a failure here the caller gives
   * everything back with {@link #release()}.
   */
  abstract FetchedBlock fetched(InetSocketAddress server, long size, long requestNanos);

  /** Gives everything back: the fetch failed, or its fetcher was closed. Idempotent. */
  synchronized void release() {
    done = true;
    windows.values().forEach(HostBuffer::close);
    windows.clear();
  }
}
