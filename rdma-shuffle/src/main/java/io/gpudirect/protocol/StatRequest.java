package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/** Metadata of one path. */
public record StatRequest(long requestId, String path) implements Request {
  @Override
  public MessageType type() {
    return MessageType.STAT;
  }

  @Override
  public int encodedLength() {
    return 8 + Wire.stringLength(path);
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    Wire.putString(buf, path);
  }

  public static StatRequest decode(ByteBuffer buf) {
    long id = buf.getLong();
    return new StatRequest(id, Wire.getString(buf, Protocol.MAX_PATH_BYTES, "STAT path"));
  }
}
