package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Server → client over the queue pair: every byte of {@link RdmaRead} {@code requestId} has
 * been written into the client's memory. {@code crc32c} is the checksum of those bytes when
 * CRC32C was negotiated on the TCP connection ({@code hasCrc}).
 */
public record RdmaReadDone(long requestId, int length, boolean hasCrc, int crc32c) implements Response {
  @Override
  public MessageType type() {
    return MessageType.RDMA_READ_DONE;
  }

  @Override
  public int encodedLength() {
    return 8 + 4 + 1 + 4;
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    buf.putInt(length);
    buf.put((byte) (hasCrc ? 1 : 0));
    buf.putInt(crc32c);
  }

  public static RdmaReadDone decode(ByteBuffer buf) {
    long id = buf.getLong();
    int length = (int) Wire.nonNegative(buf.getInt(), "RDMA_READ_DONE length");
    boolean crc = Wire.getBoolean(buf, "RDMA_READ_DONE hasCrc");
    return new RdmaReadDone(id, length, crc, buf.getInt());
  }
}
