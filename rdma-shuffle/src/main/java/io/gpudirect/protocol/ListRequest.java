package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Lists every regular file below {@code path}, sorted by path, one page at a time: the page
 * starts at index {@code startIndex} of that sorted list.
 */
public record ListRequest(long requestId, String path, int startIndex) implements Message {
  @Override
  public MessageType type() {
    return MessageType.LIST;
  }

  @Override
  public int encodedLength() {
    return 8 + Wire.stringLength(path) + 4;
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    Wire.putString(buf, path);
    buf.putInt(startIndex);
  }

  public static ListRequest decode(ByteBuffer buf) {
    long id = buf.getLong();
    String path = Wire.getString(buf, Protocol.MAX_PATH_BYTES, "LIST path");
    int start = buf.getInt();
    if (start < 0) {
      throw new ProtocolException("LIST startIndex must not be negative: " + start);
    }
    return new ListRequest(id, path, start);
  }
}
