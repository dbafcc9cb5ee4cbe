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
  void readAnswersUntil(CompletableFuture<?> done);
}
