package io.gpudirect.hadoop;

import io.gpudirect.client.ClientContext;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.memory.HostBufferPool;
import io.gpudirect.remote.TaskFetchCounters;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Fetches a {@link ReadPlan}'s ranges ahead of one sequential reader, up to a window of bytes,
 * in pieces that the reader's own reads then copy out of. Parquet reads a row group's column
 * chunks whole and only then decodes them; with the plan's next ranges already arriving, the
 * next row group crosses the network while this one decodes, and the chunks of one row group
 * come over every stream at once instead of one blocking read at a time.
 *
 * <p>Never changes what the reader sees: a read this cannot serve (outside the plan's ranges,
 * or after a piece failed) returns 0 and the stream fetches it directly, so errors are
 * reported as without read-ahead. A read outside the ranges (the footer) leaves the pieces
 * alone; a read in a range but before the pieces, or past them, restarts the plan there.
 *
 * <p>Pieces are direct buffers lent by a pool this JVM's read-aheads share (the client
 * context's, charged to its memory), so that a window is not allocated (zeroed, faulted in)
 * and later unmapped for every slice: unmaps interrupt every core of the process, which is
 * expensive in a VM (the fetch profile in docs/benchmarks.md). {@link #close()} gives them
 * back once no fetch writes into them any more; the pool keeps up to {@link #MAX_IDLE} idle.
 * One reader at a time (the stream's lock).
 */
final class ReadAhead implements AutoCloseable {
  /** Largest piece: the client's default chunk, so one piece is one request. */
  static final int MAX_PIECE = 4 << 20;
  /** Idle pieces kept for the next read-ahead: two tasks' 32 MiB windows. */
  static final int MAX_IDLE = 16;
  static final String PIECE = "read-ahead piece";

  private final RemoteStore store;
  private final String path;
  private final FileVersion version;
  private final ReadPlan plan;
  private final int pieceSize;
  private final int maxPieces;
  /** Where pieces come from and go back to, idle pieces outliving this reader. */
  private final HostBufferPool pool;
  /** Requested pieces in file order; the head is the next the reader needs. */
  private final ArrayDeque<Piece> pieces = new ArrayDeque<>();
  /** Buffers of consumed pieces, reused for the next ones. */
  private final ArrayDeque<HostBuffer> spare = new ArrayDeque<>();
  /** Next range of the plan to request from, and the offset in it. */
  private int range;
  private long cursor;
  private boolean failed;

  ReadAhead(RemoteStore store, String path, FileVersion version, ReadPlan plan, long windowBytes) {
    this(store, path, version, plan, windowBytes, pool());
  }

  ReadAhead(RemoteStore store, String path, FileVersion version, ReadPlan plan, long windowBytes,
      HostBufferPool pool) {
    this.pool = pool;
    this.store = store;
    this.path = path;
    this.version = version;
    this.plan = plan;
    this.pieceSize = (int) Math.min(MAX_PIECE, windowBytes);
    this.maxPieces = (int) Math.max(1, windowBytes / pieceSize);
    this.cursor = plan.size() == 0 ? 0 : plan.offset(0);
  }

  /** Starts fetching the plan's first window; the reader is typically still reading the footer. */
  void start() {
    fill();
  }

  /**
   * Copies into {@code dst} the fetched bytes at {@code position}, at most up to the end of
   * one piece, waiting for them if they are still arriving. Returns the bytes copied; 0 when
   * {@code position} is not fetched here, and the caller reads it directly.
   */
  int read(long position, ByteBuffer dst) {
    if (failed || !dst.hasRemaining()) {
      return 0;
    }
    int in = plan.rangeContaining(position);
    if (in < 0) {
      return 0; // the footer, or a gap between planned ranges: the pieces stay for what follows
    }
    while (!pieces.isEmpty() && pieces.peekFirst().end() <= position) {
      recycle(pieces.pollFirst()); // the reader skipped it (a row group it did not need)
    }
    Piece head = pieces.peekFirst();
    if (head == null || position < head.offset) {
      // The reader went back, or past every piece: the plan goes on from here.
      while (!pieces.isEmpty()) {
        recycle(pieces.pollFirst());
      }
      range = in;
      cursor = position;
      fill();
      head = pieces.peekFirst();
      if (head == null) {
        return 0;
      }
    }
    long start = System.nanoTime();
    try {
      head.done.join();
    } catch (CompletionException | java.util.concurrent.CancellationException e) {
      // The direct read that follows reports the failure, exactly as without read-ahead.
      failed = true;
      return 0;
    }
    long waited = System.nanoTime() - start;
    ByteBuffer src = head.view();
    src.position((int) (position - head.offset));
    int n = Math.min(src.remaining(), dst.remaining());
    src.limit(src.position() + n);
    dst.put(src);
    TaskFetchCounters.record(n, waited);
    if (position + n == head.end()) {
      recycle(pieces.pollFirst());
      fill();
    }
    return n;
  }

  /** Requests pieces until the window is full or the plan is done. */
  private void fill() {
    while (!failed && pieces.size() < maxPieces && range < plan.size()) {
      if (cursor >= plan.end(range)) {
        if (++range < plan.size()) {
          cursor = plan.offset(range);
        }
        continue;
      }
      HostBuffer buffer = buffer();
      int len = (int) Math.min(pieceSize, plan.end(range) - cursor);
      ByteBuffer target = buffer.nioBuffer().limit(len);
      long offset = cursor;
      pieces.addLast(new Piece(offset, len, buffer, store.readAsync(path, version, offset, target)));
      cursor += len;
    }
  }

  /** The pool of the JVM's client context, which its stores belong to too. */
  static HostBufferPool pool() {
    return ClientContext.shared().pool(PIECE, MAX_PIECE, MAX_IDLE);
  }

  /** Bytes of pieces lent to read-aheads now, idle ones not counted (for tests: 0 when all closed). */
  static long bytesLent() {
    return pool().lentBytes();
  }

  private HostBuffer buffer() {
    HostBuffer b = spare.pollFirst();
    return b != null ? b : pool.take();
  }

  /** The buffer goes back to the spares once its fetch can no longer write into it. */
  private void recycle(Piece p) {
    if (p.done.isDone()) {
      spare.addLast(p.buffer);
    } else {
      p.done.whenComplete((v, e) -> pool.give(p.buffer));
    }
  }

  @Override
  public void close() {
    failed = true;
    while (!pieces.isEmpty()) {
      Piece p = pieces.pollFirst();
      p.done.whenComplete((v, e) -> pool.give(p.buffer));
    }
    while (!spare.isEmpty()) {
      pool.give(spare.pollFirst());
    }
  }

  private record Piece(long offset, int length, HostBuffer buffer, CompletableFuture<Void> done) {
    long end() {
      return offset + length;
    }

    ByteBuffer view() {
      return buffer.nioBuffer().limit(length);
    }
  }
}
