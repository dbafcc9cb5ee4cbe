package io.gpudirect.transport.tcp;

import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.transport.PayloadMemory;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * A request sent on a {@link TcpConnection} and waiting for its answer. {@code read} is null for
 * a control call. {@code unverified}: a READ whose checksum is handed to the caller (its future
 * completes with the CRC32C, or null without checksums). A READ has either {@code dst} or
 * {@code memory}, bound when its payload starts to arrive.
 */
record PendingRequest(long requestId, ReadRequest read, ByteBuffer dst, PayloadMemory memory,
    CompletableFuture<Object> future, boolean unverified) {

  static PendingRequest call(long requestId) {
    return new PendingRequest(requestId, null, null, null, new CompletableFuture<>(), false);
  }

  static PendingRequest read(ReadRequest request, ByteBuffer dst, boolean unverified) {
    checkRoom(request, dst);
    return new PendingRequest(request.requestId(), request, dst, null, new CompletableFuture<>(), unverified);
  }

  static PendingRequest read(ReadRequest request, PayloadMemory memory, boolean unverified) {
    return new PendingRequest(request.requestId(), request, null, memory, new CompletableFuture<>(), unverified);
  }

  static void checkRoom(ReadRequest request, ByteBuffer dst) {
    if (dst.remaining() != request.length()) {
      throw new IllegalArgumentException("Destination has " + dst.remaining()
          + " bytes left for a READ of " + request.length());
    }
  }

  /** A control call or a READ whose whole answer fits the inbox (see {@link AnswerReader}). */
  boolean small() {
    return read == null || read.length() <= AnswerReader.INLINE_VERIFY_BYTES;
  }
}
