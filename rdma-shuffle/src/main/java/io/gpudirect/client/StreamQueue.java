package io.gpudirect.client;

import java.util.ArrayDeque;

/**
 * Which stream (slot of {@link ConnectionSlots}) the next chunk goes to, and the chunks that
 * wait for one. Each stream has at most {@link #DEPTH} requests outstanding; a chunk goes to
 * the stream with the fewest (ties in turn), or waits, in order, until a stream finishes one.
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
   * Requests a stream may have outstanding: the one arriving and one queued at the server
   * behind it, so that the server goes straight on to the next answer, with no idle round
   * trip (the stream stays ACK-clocked), while the rest wait here for whichever stream is free.
   */
  static final int DEPTH = 2;

  /** A waiting task and the stream it was given. */
  record Assignment<T>(int stream, T task) {}

  private final int[] outstanding;
  private final ArrayDeque<T> waiting = new ArrayDeque<>();
  private int nextTie;

  StreamQueue(int streams) {
    this.outstanding = new int[streams];
  }

  /**
   * The stream {@code task} is to be sent on now (counted as outstanding until
   * {@link #finished}), or -1 when every stream is full: then it waits, and a later
   * {@link #finished} hands it out.
   */
  synchronized int claim(T task) {
    int s = freest();
    if (s < 0) {
      waiting.add(task);
      return -1;
    }
    outstanding[s]++;
    return s;
  }

  /**
   * Stream {@code stream} has finished a request; the task that waited longest, with the
   * stream it is now to be sent on, or null when none waits.
   */
  synchronized Assignment<T> finished(int stream) {
    outstanding[stream]--;
    T task = waiting.poll();
    if (task == null) {
      return null;
    }
    int s = freest();
    outstanding[s]++;
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

  /** The stream with the fewest outstanding requests, below {@link #DEPTH}; -1 when none. */
  private int freest() {
    int n = outstanding.length;
    int best = -1;
    for (int k = 0; k < n; k++) {
      int s = (nextTie + k) % n;
      if (outstanding[s] < DEPTH && (best < 0 || outstanding[s] < outstanding[best])) {
        best = s;
      }
    }
    if (best >= 0) {
      nextTie = (best + 1) % n;
    }
    return best;
  }
}
