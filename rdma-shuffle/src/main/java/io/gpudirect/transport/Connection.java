package io.gpudirect.transport;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.Request;
import io.gpudirect.protocol.ShuffleRead;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.OptionalInt;
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
  CompletableFuture<Message> call(Request request);

  /**
   * Sends {@code request} and reads its payload straight into {@code dst}, whose remaining
   * bytes must equal the request length. The connection writes into {@code dst} only until
   * the future completes. Fails with {@link ServerErrorException} when the server refuses,
   * {@link ChecksumMismatchException} when the payload is corrupt.
   */
  CompletableFuture<Void> read(ReadRequest request, ByteBuffer dst);

  /**
   * As {@link #read(ReadRequest, ByteBuffer)}, except that the payload's checksum is left to
   * the caller, to check where the bytes go next (the GPU checks them in device memory): the
   * future completes with the CRC32C the server sent. Empty when there is none to hand over;
   * the transport then checked what it could itself, as {@code read} does.
   */
  default CompletableFuture<OptionalInt> readUnverified(ReadRequest request, ByteBuffer dst) {
    return read(request, dst).thenApply(v -> OptionalInt.empty());
  }

  /**
   * As {@link #read(ReadRequest, ByteBuffer)}, into memory bound when the payload starts to
   * arrive (see {@link PayloadMemory}). Here, as where a peer writes into the memory, it is
   * bound at once; a transport that reads a socket overrides this to bind late.
   */
  default CompletableFuture<Void> read(ReadRequest request, PayloadMemory dst) {
    return read(request, dst.bind());
  }

  /** As {@link #readUnverified(ReadRequest, ByteBuffer)}, into memory bound as in {@link #read(ReadRequest, PayloadMemory)}. */
  default CompletableFuture<OptionalInt> readUnverified(ReadRequest request, PayloadMemory dst) {
    return readUnverified(request, dst.bind());
  }

  /**
   * Sends a SHUFFLE_READ and reads its payload into memory bound when its answer's header
   * arrives ({@link BlockMemory}); completes with that header once the payload is in and checked
   * (its CRC32C, or Spark's checksums of the partitions it holds whole: see
   * {@link ReceivedWindow} for those it holds part of). Fails as
   * {@link #read(ReadRequest, ByteBuffer)} does, a partition that does not match Spark's checksum
   * with a {@link PartitionChecksumMismatchException}. A transport that does not carry it fails
   * the read, naming itself.
   */
  default CompletableFuture<ReceivedWindow> readBlock(ShuffleRead request, BlockMemory memory) {
    return CompletableFuture.failedFuture(new GpuDirectException("Cannot fetch shuffle block "
        + request.block().name() + " from " + peer() + " over " + getClass().getSimpleName()
        + ": it carries no shuffle blocks"));
  }

  /** Reads whose answer the waiting caller may read itself, where this connection allows it (TCP); empty otherwise. */
  default Optional<CallerReads> callerReads() {
    return Optional.empty();
  }

  /**
   * Reads straight into device memory, where this connection can (RDMA); empty otherwise. The
   * same for every connection of one transport: see {@link Transport#readsIntoDevice}.
   */
  default Optional<DeviceReads> deviceReads() {
    return Optional.empty();
  }

  /**
   * Closes this connection once no request sent on it still waits for its answer (the last
   * answer's payload is in), at once when none does; requests sent on it until then are answered
   * as usual. One sent after it closed fails at once with a {@link ConnectionLostException}, as
   * on any lost connection. False where the transport cannot tell when its answers are in (it
   * then stays open until its caller closes it); this default.
   */
  default boolean closeWhenAnswered() {
    return false;
  }

  /** Breaks the connection; everything outstanding fails with {@code cause}. */
  void abort(GpuDirectException cause);

  @Override
  void close();
}
