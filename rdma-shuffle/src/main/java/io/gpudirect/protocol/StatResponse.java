package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/** Answer to {@link StatRequest}. */
public record StatResponse(long requestId, FileMeta entry) implements Response {
  @Override
  public MessageType type() {
    return MessageType.STAT_RESPONSE;
  }

  @Override
  public int encodedLength() {
    return 8 + entry.encodedLength();
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    entry.encode(buf);
  }

  public static StatResponse decode(ByteBuffer buf) {
    long id = buf.getLong();
    return new StatResponse(id, FileMeta.decode(buf));
  }
}
