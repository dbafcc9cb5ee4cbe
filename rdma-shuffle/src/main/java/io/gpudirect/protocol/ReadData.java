package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Header of a READ answer. Exactly {@code length} raw payload bytes follow the frame, then a
 * trailer: a status byte ({@link #PAYLOAD_GOOD}, or {@link #PAYLOAD_VOID}: the client must
 * discard the payload, and an {@link ErrorResponse} for the same request follows at once),
 * then, when CRC32C was negotiated, the CRC32C of the payload, big-endian. The trailer follows
 * the payload so that the server can start sending at once, compute the checksum on another
 * core while sendfile runs, and check after the last byte went out that the file did not
 * change under sendfile.
 */
public record ReadData(long requestId, long offset, int length) implements Response {
  public static final byte PAYLOAD_GOOD = 0;
  public static final byte PAYLOAD_VOID = 1;
  public static final int STATUS_BYTES = 1;
  public static final int CRC_BYTES = 4;
  /** The longest trailer: status and CRC32C. */
  public static final int TRAILER_BYTES = STATUS_BYTES + CRC_BYTES;

  /** The trailer's length on a connection with or without CRC32C. */
  public static int trailerBytes(boolean crc) {
    return crc ? TRAILER_BYTES : STATUS_BYTES;
  }

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
