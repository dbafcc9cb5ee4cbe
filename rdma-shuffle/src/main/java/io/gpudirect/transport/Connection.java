package io.gpudirect.transport;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.ReadRequest;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * One authenticated connection to a server, as a transport provides it. Requests may be
 * pipelined from any thread; answers complete the returned futures, on the connection's
 * reader thread, so callbacks must not block. When the connection breaks, every outstanding
 * future fails at once with a {@link ConnectionLostException} naming the peer (or the cause
 * given to {@link #abort}).
 */
public interface Connection extends AutoCloseable {
  InetSocketAddress peer();

  /** Largest READ length the server accepts, from the handshake. */
  int maxReadLength();

  boolean isOpen();

  /** The capability bits both sides have ({@code Protocol.CAP_*}), from the handshake. */
  long capabilities();

  /** Sends a control request; completes with the server's answer, ERROR included. */
  CompletableFuture<Message> call(long requestId, Message request);

  /**
   * Sends {@code request} and reads its payload straight into {@code dst}, whose remaining
   * bytes must equal the request length. The connection writes into {@code dst} only until
   * the future completes. Fails with {@link ServerErrorException} when the server refuses,
   * {@link ChecksumMismatchException} when the payload is corrupt.
   */
  CompletableFuture<Void> read(ReadRequest request, ByteBuffer dst);

  /** Breaks the connection; everything outstanding fails with {@code cause}. */
  void abort(GpuDirectException cause);

  @Override
  void close();
}
