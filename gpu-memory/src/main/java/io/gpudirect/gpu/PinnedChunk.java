package io.gpudirect.gpu;

import io.gpudirect.memory.HostBuffer;
import java.nio.ByteBuffer;

/**
 * One chunk of the pinned pool, lent to one reader. {@link #close()} gives it back; the copy
 * engine closes it once the GPU has finished copying out of it, never before.
 */
public final class PinnedChunk implements AutoCloseable {
  private final PinnedChunkPool pool;
  final HostBuffer buffer;
  final ByteBuffer memory;

  PinnedChunk(PinnedChunkPool pool, HostBuffer buffer) {
    this.pool = pool;
    this.buffer = buffer;
    this.memory = buffer.nioBuffer();
  }

  /** A fresh view of the chunk's memory (position 0, limit capacity) to read the socket into. */
  public ByteBuffer view() {
    return memory.duplicate().clear();
  }

  public int capacity() {
    return memory.capacity();
  }

  @Override
  public void close() {
    pool.giveBack(this);
  }
}
