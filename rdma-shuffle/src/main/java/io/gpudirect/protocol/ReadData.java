package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Header of a READ answer. Exactly {@code length} raw payload bytes follow the frame, then,
 * when CRC32C was negotiated, a {@value #TRAILER_BYTES}-byte trailer: the CRC32C of the
 * payload, big-endian. The checksum trails the payload so that the server can start sending
 * at once and compute it on another core while sendfile runs.
 */
public record ReadData(long requestId, long offset, int length) implements Message {
  public static final int TRAILER_BYTES = 4;

  @Override
  public MessageType type() {
    return MessageType.READ_DATA;
  }

  @Override
  public int encodedLength() {
    return 8 + 8 + 4;
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    buf.putLong(offset);
    buf.putInt(length);
  }

  public static ReadData decode(ByteBuffer buf) {
    long id = buf.getLong();
    long offset = Wire.nonNegative(buf.getLong(), "READ_DATA offset");
    int length = (int) Wire.nonNegative(buf.getInt(), "READ_DATA length");
    return new ReadData(id, offset, length);
  }
}
