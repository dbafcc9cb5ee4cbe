package io.gpudirect.transport;

import io.gpudirect.protocol.ReadRequest;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * What a connection offers when a caller that waits for its own read may read the answer
 * itself (TCP): no reader thread woken to read it and then to wake the caller, a hand-off that
 * costs a 4 KiB read much of its latency. See {@link Connection#callerReads}.
 */
public interface CallerReads {
  /**
   * As {@link Connection#read}, for a caller that waits for this read at once and calls
   * {@link #readAnswersUntil} with it right after: the answer may be left for that caller.
   */
  CompletableFuture<Void> readForCaller(ReadRequest request, ByteBuffer dst);

  /**
   * Reads the connection's answers on the calling thread until {@code done} completes, when
   * no other thread is reading them and answers are due; returns at once otherwise, and the
   * caller then waits for {@code done} as usual. Other requests' futures that it completes
   * on the way complete on the calling thread.
   */
  default void readAnswersUntil(CompletableFuture<?> done) {
    readAnswersUntil(done, NO_DEADLINE);
  }

  /** A deadline for {@link #readAnswersUntil(CompletableFuture, long)} that never comes. */
  long NO_DEADLINE = Long.MIN_VALUE;

  /**
   * As {@link #readAnswersUntil(CompletableFuture)}, and the connection keeps the request's
   * timeout: while this caller reads, a connection with no answer for {@code done} by
   * {@code deadlineNanos} (of {@link System#nanoTime}) is aborted, which fails {@code done},
   * within a fraction of a second after it; the caller needs no timer task of its own. Once
   * this returns with {@code done} not complete, the deadline is the caller's to keep.
   */
  void readAnswersUntil(CompletableFuture<?> done, long deadlineNanos);
}
