package io.gpudirect.transport.tcp;

import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.Message;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;

/**
 * Writes one connection's requests, one whole frame at a time whichever thread sends, each
 * encoded into the connection's outbox when it fits: no heap buffer per request, which the
 * JDK would copy into a direct one of its own to write.
 */
final class RequestWriter {
  private final WritableByteChannel wire;
  /** Requests are encoded here, under this writer's lock (room for a READ of the longest path). */
  private final ByteBuffer outbox;
  /**
   * Requests sent so far (written under the lock): the reader thread tells an idle connection
   * by this not changing while it parks, so that no send reads the clock.
   */
  private volatile long sends;

  RequestWriter(WritableByteChannel wire, ByteBuffer outbox) {
    this.wire = wire;
    this.outbox = outbox;
  }

  void send(Message request) throws IOException {
    synchronized (this) {
      sends++;
      writeFully(wire, encode(request));
    }
  }

  long sends() {
    return sends;
  }

  private ByteBuffer encode(Message request) {
    int length = Frames.frameLength(request);
    return length <= outbox.capacity() ? Frames.encode(request, outbox.clear(), length)
        : Frames.encode(request);
  }

  static void writeFully(WritableByteChannel ch, ByteBuffer buf) throws IOException {
    while (buf.hasRemaining()) {
      ch.write(buf);
    }
  }
}
