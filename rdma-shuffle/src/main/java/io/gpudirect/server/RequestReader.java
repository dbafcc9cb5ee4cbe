package io.gpudirect.server;

import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.Message;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;

/**
 * A client's requests, read through one buffer: a {@code read(2)} takes whatever the client
 * has sent, so pipelined requests cost one system call per batch rather than two per request
 * (length, then frame), and a request costs no allocation beyond its message. Only requests
 * come from a client, never raw bytes, so reading ahead is always safe. A frame larger than
 * the buffer (a client's frame may be up to 1 MiB) is read into a buffer of its own.
 */
final class RequestReader {
  /** Room for any READ (its path is at most 4 KiB) and a few more pipelined behind it. */
  static final int BUFFER_BYTES = 16 * 1024;

  private final ReadableByteChannel in;
  /** Read mode: position..limit is what has been received and not yet decoded. */
  private final ByteBuffer buf = ByteBuffer.allocateDirect(BUFFER_BYTES).flip();

  RequestReader(ReadableByteChannel in) {
    this.in = in;
  }

  /**
   * The next message. {@link EOFException} when the stream ends cleanly between frames or
   * inside one (the client went away); {@code ProtocolException} for an invalid frame.
   */
  Message next() throws IOException {
    if (!fill(4, true)) {
      throw new EOFException("Stream ended");
    }
    int length = Frames.checkLength(buf.getInt(buf.position()));
    buf.position(buf.position() + 4);
    if (length > buf.capacity()) {
      ByteBuffer frame = ByteBuffer.allocate(length);
      frame.put(buf);
      Frames.readFully(in, frame, false);
      return Frames.decode(frame.flip());
    }
    fill(length, false);
    ByteBuffer frame = buf.slice(buf.position(), length);
    buf.position(buf.position() + length);
    return Frames.decode(frame);
  }

  /** Makes {@code n} (at most the capacity) bytes available; false only at a clean end. */
  private boolean fill(int n, boolean eofOk) throws IOException {
    if (buf.remaining() >= n) {
      return true;
    }
    buf.compact();
    try {
      while (buf.position() < n) {
        if (in.read(buf) < 0) {
          if (eofOk && buf.position() == 0) {
            return false;
          }
          throw new EOFException("Stream ended with " + (n - buf.position())
              + " bytes of a frame still expected");
        }
      }
      return true;
    } finally {
      buf.flip();
    }
  }
}
