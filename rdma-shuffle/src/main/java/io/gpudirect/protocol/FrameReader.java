package io.gpudirect.protocol;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.util.function.IntSupplier;
import java.util.function.IntUnaryOperator;

/**
 * Length-prefixed frames (see {@link Frames}) read from a blocking channel through one buffer,
 * so that a {@code read(2)} takes whatever the peer has sent: pipelined frames cost one system
 * call per batch rather than two per frame (length, then frame), and a frame that fits costs
 * no allocation beyond its message. Each frame's CRC32C is checked by {@link Frames#decode}
 * before any field is read. Both sides read with it: the server its client's requests, the
 * client its server's answers, whose READ_DATA payloads may start in the buffer too
 * ({@link #drainInto}, {@link #skip}, {@link #take}).
 *
 * <p>Not thread-safe: one reader at a time (the server's connection thread, the client's
 * holder of the reading role).
 */
public final class FrameReader {
  private final ReadableByteChannel in;
  /** Read mode: position..limit is what has been received and not yet consumed. */
  private final ByteBuffer buf;
  /** Given the bytes needed, how far one read may fill the buffer (at most its capacity). */
  private final IntUnaryOperator readLimit;

  /**
   * Reads from {@code in} through {@code buffer}, whose owner keeps it for as long as this
   * reader is used, every read taking as much as the buffer holds.
   */
  public FrameReader(ReadableByteChannel in, ByteBuffer buffer) {
    this(in, buffer, needed -> buffer.capacity());
  }

  /**
   * As {@link #FrameReader(ReadableByteChannel, ByteBuffer)}, one read filling the buffer only
   * up to {@code readLimit.applyAsInt(bytesNeeded)}: where raw bytes follow a frame and should
   * go from the socket straight to where they belong, not through this buffer.
   */
  public FrameReader(ReadableByteChannel in, ByteBuffer buffer, IntUnaryOperator readLimit) {
    this.in = in;
    this.buf = buffer.clear().flip();
    this.readLimit = readLimit;
  }

  /**
   * The next message; null when the stream ends cleanly before a frame starts.
   * {@link EOFException} when it ends inside one, {@link ProtocolException} for an invalid
   * frame ({@link CorruptFrameException} for one whose checksum does not match).
   */
  public Message next() throws IOException {
    if (!fill(4, true)) {
      return null;
    }
    int length = Frames.checkLength(buf.getInt());
    if (length > buf.capacity()) {
      // A frame larger than the buffer (a listing page, say): read into one of its own.
      ByteBuffer frame = ByteBuffer.allocate(length);
      drainInto(frame);
      Frames.readFully(in, frame, false);
      return Frames.decode(frame.flip());
    }
    fill(length, false);
    ByteBuffer frame = buf.slice(buf.position(), length);
    buf.position(buf.position() + length);
    return Frames.decode(frame);
  }

  /**
   * The next message if its whole frame is in the buffer already or comes in with one read of
   * the bytes the channel is known to hold ({@code ready}, asked only when the buffer holds no
   * whole frame; 0 where unknown), so that this never waits for the peer; else null, with
   * nothing consumed: the server reads its client's pipelined requests ahead of the answer it
   * is sending with it. A frame larger than the buffer is left to {@link #next}.
   * {@link ProtocolException} as {@link #next} for an invalid frame.
   */
  public Message nextIfReady(IntSupplier ready) throws IOException {
    int n;
    if (!hasFrame() && buf.remaining() < buf.capacity() && (n = ready.getAsInt()) > 0) {
      buf.compact();
      try {
        buf.limit(Math.min(buf.capacity(), buf.position() + n));
        in.read(buf);
      } finally {
        buf.flip();
      }
    }
    return hasFrame() ? next() : null;
  }

  /** Whether a whole frame that fits the buffer is in it. */
  private boolean hasFrame() throws ProtocolException {
    if (buf.remaining() < 4) {
      return false;
    }
    int length = Frames.checkLength(buf.getInt(buf.position()));
    return length <= buf.capacity() - 4 && buf.remaining() >= 4 + length;
  }

  /** The next {@code n} bytes (at most the buffer's capacity), read if need be; valid until the next call. */
  public ByteBuffer take(int n) throws IOException {
    fill(n, false);
    ByteBuffer bytes = buf.slice(buf.position(), n);
    buf.position(buf.position() + n);
    return bytes;
  }

  /** Moves what the buffer holds ahead of the channel into {@code dst}, as far as it has room. */
  public void drainInto(ByteBuffer dst) {
    int n = Math.min(buf.remaining(), dst.remaining());
    if (n > 0) {
      dst.put(buf.slice(buf.position(), n));
      buf.position(buf.position() + n);
    }
  }

  /** Reads past {@code n} bytes, through the buffer. */
  public void skip(long n) throws IOException {
    for (long left = n; left > 0; ) {
      int k = (int) Math.min(left, buf.capacity());
      take(k);
      left -= k;
    }
  }

  /** Makes {@code n} (at most the capacity) bytes available; false only at a clean end, if allowed. */
  private boolean fill(int n, boolean eofOk) throws IOException {
    if (buf.remaining() >= n) {
      return true;
    }
    buf.compact();
    try {
      buf.limit(Math.min(buf.capacity(), Math.max(n, readLimit.applyAsInt(n))));
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
