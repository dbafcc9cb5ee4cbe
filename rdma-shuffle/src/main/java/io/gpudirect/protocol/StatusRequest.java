package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/** Asks for the server's counters; authenticated like every other request. */
public record StatusRequest(long requestId) implements Request {
  @Override
  public MessageType type() {
    return MessageType.STATUS;
  }

  @Override
  public int encodedLength() {
    return 8;
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
  }

  public static StatusRequest decode(ByteBuffer buf) {
    return new StatusRequest(buf.getLong());
  }
}
