package io.gpudirect.transport.tcp;

import io.gpudirect.protocol.CorruptFrameException;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.FrameReader;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.ProtocolException;
import io.gpudirect.protocol.RdmaReadDone;
import io.gpudirect.protocol.ReadData;
import io.gpudirect.protocol.Response;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.transport.ChecksumMismatchException;
import io.gpudirect.transport.ConnectionLostException;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.CorruptAnswerException;
import io.gpudirect.transport.ReceivedWindow;
import io.gpudirect.transport.ServerErrorException;
import io.gpudirect.transport.WindowChecks;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.util.zip.CRC32C;

/**
 * Reads one connection's answers off the wire and settles their requests: frames through the
 * inbox, READ_DATA and SHUFFLE_DATA payloads straight into the caller's buffer, then their trailer and CRC32C.
 * Only the holder of the connection's reading role uses it.
 */
final class AnswerReader {
  private static final int HEAP_READ_SLICE = 256 * 1024;
  /** Payloads up to this size are checked on the reading thread (see {@link #receive}). */
  static final int INLINE_VERIFY_BYTES = 64 * 1024;
  /** A READ_DATA frame before its payload: length, type, body. */
  private static final int READ_DATA_FRAME = Frames.HEADER_BYTES + new ReadData(0, 0, 0).encodedLength();
  /** The inbox holds a whole small answer: header, up to 64 KiB of payload, trailer. */
  static final int INBOX_BYTES = READ_DATA_FRAME + INLINE_VERIFY_BYTES + ReadData.TRAILER_BYTES;

  private final ReadableByteChannel wire;
  private final String server;
  private final boolean crc;
  private final OutstandingRequests outstanding;
  /** Checks large payloads' checksums off the reading thread. */
  private final ConnectionThreads threads;
  /**
   * Bytes received and not yet consumed. Frames and trailers are read through it, so that a
   * small answer (header, payload, trailer) takes one {@code read(2)} rather than four. How
   * much one read takes: while a small answer is due, all the inbox holds; otherwise no more
   * than the bytes needed or a trailer and the next READ_DATA header, so that a large payload
   * still goes from the socket straight into its buffer (at most that many of its bytes pass
   * through the inbox).
   */
  private final FrameReader inbox;
  /** The CRC32C of the payload being received by {@link #receiveChecking}. */
  private final CRC32C onTheWay = new CRC32C();

  /** {@code buffer}: the inbox, direct (so the JDK needs no temporary one), of {@link #INBOX_BYTES}. */
  AnswerReader(ReadableByteChannel wire, ByteBuffer buffer, String server, boolean crc,
      OutstandingRequests outstanding, ConnectionThreads threads) {
    this.wire = wire;
    this.server = server;
    this.crc = crc;
    this.outstanding = outstanding;
    this.threads = threads;
    this.inbox = new FrameReader(wire, buffer, needed -> outstanding.smallDue() ? buffer.capacity()
        : Math.max(needed, ReadData.TRAILER_BYTES + READ_DATA_FRAME));
  }

  /** Reads and dispatches one answer. */
  void readAnswer() throws IOException {
    Message m;
    try {
      m = readFrame();
    } catch (CorruptFrameException e) {
      // Which request it answers is in the frame, which cannot be believed: every request
      // outstanding here fails with this, and may be retried on a new connection.
      throw new CorruptAnswerException("Corrupt answer from gpudirect server " + server + ": "
          + e.getMessage() + "; the connection is closed", e);
    }
    if (m instanceof ReadData d) {
      receivePayload(d);
    } else if (m instanceof ShuffleData d) {
      receiveBlock(d);
    } else if (m instanceof ErrorResponse e) {
      if (e.requestId() == ErrorResponse.CONNECTION) {
        throw new ServerErrorException(e.code(), "Gpudirect server " + server
            + " closed the connection: " + e.message());
      }
      outstanding.take(e.requestId(), m).future().completeExceptionally(
          new ServerErrorException(e.code(), e.message()));
    } else if (m instanceof Response r && !(m instanceof RdmaReadDone)) {
      // RDMA_READ_DONE belongs on the queue pair; on this connection it is a broken server.
      outstanding.take(r.requestId(), m).future().complete(m);
    } else {
      throw new ProtocolException("Unexpected " + m.type() + " from server " + server);
    }
  }

  /** The next frame off the wire. */
  private Message readFrame() throws IOException {
    Message m = inbox.next();
    if (m == null) {
      throw new ConnectionLostException("Gpudirect server " + server + " closed the connection", null);
    }
    return m;
  }

  private void receivePayload(ReadData d) throws IOException {
    PendingRequest p = outstanding.takeToReceive(d.requestId(), d);
    if (p.read() == null || d.length() != p.read().length() || d.offset() != p.read().offset()) {
      throw new ProtocolException("READ_DATA for request " + d.requestId() + " (offset "
          + d.offset() + ", length " + d.length() + ") does not match its request "
          + p.read());
    }
    ByteBuffer dst = p.dst();
    RuntimeException unbound = null;
    if (dst == null) {
      // Late binding: the memory is taken now that this payload is next on the wire.
      try {
        dst = p.memory().bind();
        PendingRequest.checkRoom(p.read(), dst);
      } catch (RuntimeException e) {
        dst = null;
        unbound = e;
      }
    }
    receive(p, p.read().length(), dst, unbound, null);
  }

  /** A SHUFFLE_READ's answer: its memory bound now that the header says how long it is. */
  private void receiveBlock(ShuffleData d) throws IOException {
    PendingRequest p = outstanding.takeToReceive(d.requestId(), d);
    if (p.block() == null || !d.answers(p.block())) {
      throw new ProtocolException("SHUFFLE_DATA for request " + d.requestId() + " (block length "
          + d.blockLength() + ", offset " + d.offset() + ", length " + d.length() + ", "
          + d.version().describe() + ") does not answer its request " + (p.block() != null
          ? p.block() : p.read()));
    }
    ByteBuffer dst = null;
    RuntimeException unbound = null;
    try {
      dst = p.blockMemory().bind(d);
      if (dst.remaining() != d.length()) {
        throw new IllegalArgumentException("Destination has " + dst.remaining()
            + " bytes left for a window of " + d.length() + " bytes of " + p.block().block().name());
      }
    } catch (RuntimeException e) {
      dst = null;
      unbound = e;
    }
    receive(p, d.length(), dst, unbound, d);
  }

  /** How a window's bytes are checked: against Spark's partition checksums it carries, or null (CRC32C). */
  private WindowChecks partitionChecks(PendingRequest p, Object answer) {
    return crc && answer instanceof ShuffleData d && d.checks().present()
        ? new WindowChecks(p.block().block(), d) : null;
  }

  /**
   * The {@code length} payload bytes of {@code p} into {@code dst} (past them when it is null:
   * {@code unbound} says why there was no memory, and fails this read alone), then the trailer;
   * a good payload completes {@code p} with {@code answer} (or, unverified, with its CRC32C; a
   * shuffle window with the {@link ReceivedWindow} it is). A shuffle window that carries Spark's
   * partition checksums is checked against them, and its trailer has no CRC32C.
   */
  private void receive(PendingRequest p, int length, ByteBuffer dst, RuntimeException unbound,
      Object answer) throws IOException {
    WindowChecks partitions = partitionChecks(p, answer);
    boolean trailerCrc = crc && partitions == null;
    boolean checkOnTheWay = false;
    if (dst == null) {
      // No memory for it: read past the payload, so that this read alone fails.
      inbox.skip(length);
    } else {
      int start = dst.position();
      inbox.drainInto(dst);
      // A large payload into direct memory is checksummed as it arrives (see receiveChecking),
      // unless its checksum is too slow for this thread (Adler-32): then on the pool, below.
      checkOnTheWay = crc && !p.unverified() && dst.isDirect() && length > INLINE_VERIFY_BYTES
          && (partitions == null || partitions.keepsUpWithTheWire());
      if (checkOnTheWay) {
        receiveChecking(dst, start, partitions);
      } else if (dst.isDirect()) {
        Frames.readFully(wire, dst, false);
      } else {
        readIntoHeap(dst);
      }
    }
    ByteBuffer trailer = inbox.take(ReadData.trailerBytes(trailerCrc));
    byte status = trailer.get();
    int expected = trailerCrc ? trailer.getInt() : 0;
    if (status != ReadData.PAYLOAD_GOOD) {
      voided(p, status);
      return;
    }
    // Still "receiving" until the trailer is in: a connection lost before then fails this read too.
    outstanding.received();
    if (unbound != null) {
      p.future().completeExceptionally(unbound);
      return;
    }
    if (partitions != null) {
      if (checkOnTheWay) {
        settle(p, partitions, null);
      } else if (length <= INLINE_VERIFY_BYTES) {
        settle(p, partitions, dst);
      } else {
        ByteBuffer bytes = dst;
        threads.verify(() -> settle(p, partitions, bytes));
      }
      return;
    }
    Object result = answer instanceof ShuffleData d ? ReceivedWindow.whole(d) : answer;
    if (!crc) {
      p.future().complete(result);
      return;
    }
    if (p.unverified()) {
      p.future().complete(expected);
      return;
    }
    // A small payload is checked here, where checking costs less than a hand-off to the pool;
    // a large one into heap memory on another core, so that this thread goes on reading.
    if (checkOnTheWay) {
      settle(p, length, expected, (int) onTheWay.getValue(), result);
    } else if (length <= INLINE_VERIFY_BYTES) {
      onTheWay.reset();
      onTheWay.update(dst.duplicate().flip());
      settle(p, length, expected, (int) onTheWay.getValue(), result);
    } else {
      ByteBuffer bytes = dst;
      threads.verify(() -> verify(p, length, bytes, expected, result));
    }
  }

  /**
   * The server voided the payload just received (the file changed while it was sent): the
   * ERROR that says why follows at once, and the read fails with it; the bytes in the
   * caller's buffer must not be used.
   */
  private void voided(PendingRequest p, byte status) throws IOException {
    if (status != ReadData.PAYLOAD_VOID) {
      throw new ProtocolException("READ_DATA trailer of request " + p.requestId()
          + " has status " + status + "; expected 0 or 1");
    }
    Message m = readFrame();
    outstanding.received();
    if (!(m instanceof ErrorResponse e) || e.requestId() != p.requestId()) {
      throw new ProtocolException("Server " + server + " voided the payload of request "
          + p.requestId() + " but sent " + m.type() + " instead of its ERROR");
    }
    p.future().completeExceptionally(new ServerErrorException(e.code(), e.message()));
  }

  /**
   * Reads the rest of a payload into its direct buffer and updates {@link #onTheWay} (or, for a
   * shuffle window carrying them, {@code partitions}) with the bytes of each {@code read(2)}
   * right after it put them there, while they are still in this core's cache (a read returns
   * some 100-200 KiB on loopback). Checking the whole chunk on the pool afterwards read it back
   * from memory: 4 MiB per chunk, on the same 2 cores (docs/benchmarks.md, "Profile").
   */
  private void receiveChecking(ByteBuffer dst, int start, WindowChecks partitions) throws IOException {
    onTheWay.reset();
    ByteBuffer view = dst.duplicate();
    view.limit(dst.position()).position(start);
    update(view, partitions);
    while (dst.hasRemaining()) {
      int from = dst.position();
      if (wire.read(dst) < 0) {
        throw new EOFException("Stream ended with " + dst.remaining()
            + " bytes still expected");
      }
      view.limit(dst.position()).position(from);
      update(view, partitions);
    }
  }

  private void update(ByteBuffer view, WindowChecks partitions) {
    if (partitions != null) {
      partitions.update(view);
    } else {
      onTheWay.update(view);
    }
  }

  /**
   * A shuffle window checked against Spark's partition checksums: {@code bytes}, the whole
   * window, taken in first (null where they were on the way in).
   */
  private void settle(PendingRequest p, WindowChecks partitions, ByteBuffer bytes) {
    try {
      if (bytes != null) {
        partitions.update(bytes.duplicate().flip());
      }
      p.future().complete(partitions.verdict("from gpudirect server " + server));
    } catch (RuntimeException e) {
      p.future().completeExceptionally(e);
    }
  }

  /**
   * The JDK reads a socket into a heap buffer through a temporary direct buffer as large as
   * the read, cached per thread; reading in slices keeps that copy buffer small.
   */
  private void readIntoHeap(ByteBuffer dst) throws IOException {
    int limit = dst.limit();
    try {
      while (dst.position() < limit) {
        dst.limit(Math.min(limit, dst.position() + HEAP_READ_SLICE));
        Frames.readFully(wire, dst, false);
      }
    } finally {
      dst.limit(limit);
    }
  }

  private void verify(PendingRequest p, int length, ByteBuffer dst, int expected, Object answer) {
    CRC32C c = new CRC32C();
    c.update(dst.duplicate().flip());
    settle(p, length, expected, (int) c.getValue(), answer);
  }

  private void settle(PendingRequest p, int length, int expected, int actual, Object answer) {
    if (actual != expected) {
      long offset = p.read() != null ? p.read().offset() : p.block().offset();
      p.future().completeExceptionally(new ChecksumMismatchException(p.source(), offset, length,
          "from gpudirect server " + server, expected, actual));
    } else {
      p.future().complete(answer);
    }
  }
}
