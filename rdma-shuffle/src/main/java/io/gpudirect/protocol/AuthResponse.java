package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/** Client → server proof: {@link Auth#clientProof}. */
public record AuthResponse(byte[] mac) implements Message {
  @Override
  public MessageType type() {
    return MessageType.AUTH_RESPONSE;
  }

  @Override
  public int encodedLength() {
    return Protocol.MAC_BYTES;
  }

  @Override
  public void encode(ByteBuffer buf) {
    Wire.putBytes(buf, mac, Protocol.MAC_BYTES, "AUTH_RESPONSE mac");
  }

  public static AuthResponse decode(ByteBuffer buf) {
    return new AuthResponse(Wire.getBytes(buf, Protocol.MAC_BYTES, "AUTH_RESPONSE mac"));
  }
}
