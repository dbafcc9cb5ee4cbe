package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Header of a READ answer; exactly {@code length} raw payload bytes follow the frame.
 * {@code crc32c} is CRC32C over the payload (0 when CRC32C was not negotiated).
 */
public record ReadData(long requestId, long offset, int length, int crc32c) implements Message {
  @Override
  public MessageType type() {
    return MessageType.READ_DATA;
  }

  @Override
  public int encodedLength() {
    return 8 + 8 + 4 + 4;
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    buf.putLong(offset);
    buf.putInt(length);
    buf.putInt(crc32c);
  }

  public static ReadData decode(ByteBuffer buf) {
    long id = buf.getLong();
    long offset = Wire.nonNegative(buf.getLong(), "READ_DATA offset");
    int length = (int) Wire.nonNegative(buf.getInt(), "READ_DATA length");
    return new ReadData(id, offset, length, buf.getInt());
  }
}
