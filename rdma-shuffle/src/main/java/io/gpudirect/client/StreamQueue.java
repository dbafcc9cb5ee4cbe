package io.gpudirect.client;

import java.util.ArrayDeque;
import java.util.function.ToLongFunction;

/**
 * Which stream (slot of {@link ConnectionSlots}) the next chunk goes to, and the chunks that
 * wait for one. Each stream has at most {@link #DEPTH} full chunks' bytes outstanding (and
 * always room for {@link #DEPTH} requests, however large): a chunk goes to the stream with the
 * fewest bytes outstanding that has room for it (ties in turn), or waits, in order, until a
 * stream finishes enough. Weighing requests by their bytes, not counting them, lets small ones
 * (shuffle blocks of some KiB) keep a round trip's worth in flight: counted, two 16 KiB blocks
 * per round trip was all a stream carried, 73 Mbit/s at a 2 ms round trip
 * ({@code ShuffleOverLatencyTest}).
 *
 * <p>Why not hand chunks round-robin to the streams as they are asked for: a caller's read
 * completes only when its slowest chunk does, and streams do not run at the same rate (on a
 * link with drops, flows differ a lot from moment to moment). Chunks dealt out in advance
 * leave a fast stream idle while a slow one still holds its share; a stream that goes idle
 * then restarts by sending a whole congestion window at once, which a shallow switch queue
 * drops (docs/benchmarks.md, "A link that is not loopback"). Here a stream takes the next
 * chunk when it has room, so a slow one is given fewer and every one stays busy while any
 * chunk waits.
 */
final class StreamQueue<T> {
  /**
   * Full chunks a stream may have outstanding: the one arriving and one queued at the server
   * behind it, so that the server goes straight on to the next answer, with no idle round
   * trip (the stream stays ACK-clocked), while the rest wait here for whichever stream is free.
   */
  static final int DEPTH = 2;
  /** Requests a stream may have outstanding however small: what one round trip's worth of small blocks needs. */
  static final int MAX_REQUESTS = 64;

  /** A waiting task and the stream it was given. */
  record Assignment<T>(int stream, T task) {}

  private final long depthBytes;
  private final ToLongFunction<T> bytes;
  private final int[] outstanding;
  private final long[] outstandingBytes;
  private final ArrayDeque<T> waiting = new ArrayDeque<>();
  private int nextTie;

  /**
   * Over {@code streams}, each with up to {@code depthBytes} outstanding ({@link #DEPTH} full
   * chunks), a task weighing {@code bytes} of it.
   */
  StreamQueue(int streams, long depthBytes, ToLongFunction<T> bytes) {
    this.outstanding = new int[streams];
    this.outstandingBytes = new long[streams];
    this.depthBytes = depthBytes;
    this.bytes = bytes;
  }

  /**
   * The stream {@code task} is to be sent on now (counted as outstanding until
   * {@link #finished}), or -1 when no stream has room: then it waits, and {@link #nextToSend}
   * hands it out once one has.
   */
  synchronized int claim(T task) {
    int s = waiting.isEmpty() ? freest(bytes.applyAsLong(task)) : -1;
    if (s < 0) {
      waiting.add(task);
      return -1;
    }
    take(s, task);
    return s;
  }

  /** Stream {@code stream} has finished {@code task}, a request of it. */
  synchronized void finished(int stream, T task) {
    outstanding[stream]--;
    outstandingBytes[stream] -= bytes.applyAsLong(task);
  }

  /**
   * The task that waited longest, with the stream it is now to be sent on, where one has room
   * for it; else null. Called after {@link #finished} until null: one large request done may
   * make room for several small ones.
   */
  synchronized Assignment<T> nextToSend() {
    T task = waiting.peek();
    if (task == null) {
      return null;
    }
    int s = freest(bytes.applyAsLong(task));
    if (s < 0) {
      return null;
    }
    waiting.poll();
    take(s, task);
    return new Assignment<>(s, task);
  }

  /** Requests outstanding on {@code stream} (for tests and diagnostics). */
  synchronized int outstanding(int stream) {
    return outstanding[stream];
  }

  /** Tasks waiting for a stream. */
  synchronized int waiting() {
    return waiting.size();
  }

  private void take(int stream, T task) {
    outstanding[stream]++;
    outstandingBytes[stream] += bytes.applyAsLong(task);
  }

  /** Whether {@code stream} has room for a request of {@code size} bytes. */
  private boolean hasRoom(int stream, long size) {
    return outstanding[stream] < DEPTH
        || (outstanding[stream] < MAX_REQUESTS && outstandingBytes[stream] + size <= depthBytes);
  }

  /** The stream with room for {@code size} bytes and the fewest outstanding; -1 when none. */
  private int freest(long size) {
    int n = outstanding.length;
    int best = -1;
    for (int k = 0; k < n; k++) {
      int s = (nextTie + k) % n;
      if (hasRoom(s, size) && (best < 0 || outstandingBytes[s] < outstandingBytes[best])) {
        best = s;
      }
    }
    if (best >= 0) {
      nextTie = (best + 1) % n;
    }
    return best;
  }
}
