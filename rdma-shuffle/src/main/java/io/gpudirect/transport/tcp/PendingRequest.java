package io.gpudirect.transport.tcp;

import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.ShuffleRead;
import io.gpudirect.transport.BlockMemory;
import io.gpudirect.transport.PayloadMemory;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * A request sent on a {@link TcpConnection} and waiting for its answer. {@code read} is null for
 * a control call. {@code unverified}: a READ whose checksum is handed to the caller (its future
 * completes with the CRC32C, or null without checksums). A READ has either {@code dst} or
 * {@code memory}, bound when its payload starts to arrive. A SHUFFLE_READ ({@code block}) has
 * {@code blockMemory}, bound when its answer's header says how long its payload is; its future
 * completes with that header.
 */
record PendingRequest(long requestId, ReadRequest read, ByteBuffer dst, PayloadMemory memory,
    CompletableFuture<Object> future, boolean unverified, ShuffleRead block,
    BlockMemory blockMemory) {

  static PendingRequest call(long requestId) {
    return new PendingRequest(requestId, null, null, null, new CompletableFuture<>(), false,
        null, null);
  }

  static PendingRequest read(ReadRequest request, ByteBuffer dst, boolean unverified) {
    checkRoom(request, dst);
    return new PendingRequest(request.requestId(), request, dst, null, new CompletableFuture<>(),
        unverified, null, null);
  }

  static PendingRequest read(ReadRequest request, PayloadMemory memory, boolean unverified) {
    return new PendingRequest(request.requestId(), request, null, memory,
        new CompletableFuture<>(), unverified, null, null);
  }

  static PendingRequest block(ShuffleRead request, BlockMemory memory) {
    return new PendingRequest(request.requestId(), null, null, null, new CompletableFuture<>(),
        false, request, memory);
  }

  static void checkRoom(ReadRequest request, ByteBuffer dst) {
    if (dst.remaining() != request.length()) {
      throw new IllegalArgumentException("Destination has " + dst.remaining()
          + " bytes left for a READ of " + request.length());
    }
  }

  /**
   * A control call or a READ whose whole answer fits the inbox (see {@link AnswerReader}); or a
   * SHUFFLE_READ, whose length is not known before its answer and which is most often small (a
   * block of one map task for one reducer), so that its whole answer may come in one read.
   */
  boolean small() {
    return read == null || read.length() <= AnswerReader.INLINE_VERIFY_BYTES;
  }

  /** What the payload is of, for a checksum mismatch: the file's path or the block's name. */
  String source() {
    return read != null ? read.path() : block.block().name();
  }
}
