package io.gpudirect.cudf;

import io.gpudirect.GpuDirectException;
import io.gpudirect.gpu.PinnedChunk;
import io.gpudirect.gpu.PinnedChunkPool;
import io.gpudirect.transport.PayloadMemory;
import java.nio.ByteBuffer;

/**
 * The pinned chunk of one piece of a device read, taken from the pool only when the piece's
 * bytes start to arrive (late binding). A piece whose request still waits behind others on
 * its connection holds no chunk: at 16 streams with 3 requests each in flight, 16 chunks are
 * being filled instead of 48 held, and the pool's last-in-first-out order hands out chunks
 * still in the CPU's cache, as the raw socket's reused buffer is (docs/benchmarks.md, H200).
 *
 * <p>One owner at a time: this holder from {@link #bind} until {@link #handOver} (to the copy
 * engine, which gives the chunk back after its copy) or {@link #giveBack} (the read failed).
 * Every call to {@link #bind} gives the same chunk, so that a chunk retried, or read in
 * several requests, lands in one place.
 */
final class ChunkOnArrival implements PayloadMemory {
  private final PinnedChunkPool pool;
  private final int length;
  private PinnedChunk chunk;
  private boolean done;

  ChunkOnArrival(PinnedChunkPool pool, int length) {
    if (length <= 0 || length > pool.chunkSize()) {
      throw new IllegalArgumentException("A piece of " + length + " bytes does not fit a pinned chunk of "
          + pool.chunkSize());
    }
    this.pool = pool;
    this.length = length;
  }

  /** The chunk's first {@code length} bytes; takes a chunk from the pool (waiting for one) the first time. */
  @Override
  public synchronized ByteBuffer bind() {
    if (done) {
      throw new GpuDirectException("A pinned chunk was asked for after its read was over");
    }
    if (chunk == null) {
      chunk = pool.acquire();
    }
    return chunk.view().limit(length);
  }

  /** Whether a chunk has been taken for this piece (its bytes started to arrive). */
  synchronized boolean bound() {
    return chunk != null;
  }

  /** The filled chunk, for its next owner to close; the read succeeded, so it was bound. */
  synchronized PinnedChunk handOver() {
    if (chunk == null || done) {
      throw new IllegalStateException("No pinned chunk to hand over: " + (done ? "handed over already" : "never bound"));
    }
    done = true;
    return chunk;
  }

  /** The read failed: the chunk, if one was taken, goes back to the pool; none is taken later. */
  synchronized void giveBack() {
    if (done) {
      return;
    }
    done = true;
    if (chunk != null) {
      chunk.close();
    }
  }
}
