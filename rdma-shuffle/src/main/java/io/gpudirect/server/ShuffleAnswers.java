package io.gpudirect.server;

import io.gpudirect.protocol.ShuffleRead;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The answers to one TCP connection's SHUFFLE_READs: the window asked for, found and checked
 * ({@link BlockWindow}), sent as a READ's bytes are ({@link ReadAnswers#send}), with the same
 * check after them: a data file that changed while it was sent voids the payload.
 *
 * <p>Both files are opened for each request and closed after it, as Spark's own server opens
 * the data file for each block it sends: not kept open between requests as a READ's file is.
 */
final class ShuffleAnswers {
  /** The server as its connections see it. */
  private final ServerContext server;
  private final ReadAnswers reads;
  /** The client checks what it receives: answers carry Spark's checksums where there are any. */
  private final boolean checked;
  private ByteBuffer indexSlice;

  ShuffleAnswers(ServerContext server, ReadAnswers reads, boolean checked) {
    this.server = server;
    this.reads = reads;
    this.checked = checked;
  }

  void answer(ShuffleRead r) throws IOException {
    server.counters().readStarted();
    try (BlockWindow window = BlockWindow.open(server, r, indexSlice(), checked)) {
      try {
        reads.send(window.header(), window.range());
      } catch (RequestRefusedException e) {
        throw window.sending(e);
      }
      server.counters().countBytesSent(window.header().length());
    } finally {
      server.counters().readEnded();
    }
  }

  private ByteBuffer indexSlice() {
    if (indexSlice == null) {
      indexSlice = ByteBuffer.allocate(BlockWindow.INDEX_SLICE);
    }
    return indexSlice;
  }
}
