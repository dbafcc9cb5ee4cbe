package io.gpudirect.shuffle;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.transport.BlockMemory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Map;
import java.util.TreeMap;

/**
 * The memory of one block while it is fetched: a buffer per window, taken from the allocator
 * when the window's answer has said its length (on the connection's reader thread), the same one
 * again for a retry of the same length, a new one for a retry that found another. Ends either
 * as a {@link FetchedBlock}, which owns the buffers from then on, or given back.
 */
final class BlockBytes implements BlockMemory {
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

  private final BufferAllocator allocator;
  private final ShuffleBlockId block;
  /** By the window's offset within the block. */
  private final Map<Long, HostBuffer> windows = new TreeMap<>();
  private boolean done;

  BlockBytes(BufferAllocator allocator, ShuffleBlockId block) {
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
    HostBuffer b = allocator.allocate(answer.length());
    windows.put(answer.offset(), b);
    return b.nioBuffer();
  }

  /** The block, which now owns the buffers: every window of its {@code size} bytes is in. */
  synchronized FetchedBlock fetched(InetSocketAddress server, long size) {
    done = true;
    return new FetchedBlock(block, server, size, new ArrayList<>(windows.values()));
  }

  /** Gives every buffer back: the fetch failed, or its fetcher was closed. */
  synchronized void release() {
    done = true;
    windows.values().forEach(HostBuffer::close);
    windows.clear();
  }
}
