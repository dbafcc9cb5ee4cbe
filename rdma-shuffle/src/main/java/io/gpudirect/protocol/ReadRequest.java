package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Bytes {@code [offset, offset + length)} of a file. The server answers with {@link ReadData}
 * followed by exactly {@code length} payload bytes, or with an {@link ErrorResponse}.
 */
public record ReadRequest(long requestId, String path, long offset, int length)
    implements Message {
  @Override
  public MessageType type() {
    return MessageType.READ;
  }

  @Override
  public int encodedLength() {
    return 8 + Wire.stringLength(path) + 8 + 4;
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    Wire.putString(buf, path);
    buf.putLong(offset);
    buf.putInt(length);
  }

  public static ReadRequest decode(ByteBuffer buf) {
    long id = buf.getLong();
    String path = Wire.getString(buf, Protocol.MAX_PATH_BYTES, "READ path");
    long offset = Wire.nonNegative(buf.getLong(), "READ offset");
    int length = (int) Wire.nonNegative(buf.getInt(), "READ length");
    return new ReadRequest(id, path, offset, length);
  }
}
