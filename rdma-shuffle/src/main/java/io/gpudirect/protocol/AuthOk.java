package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/** Server → client: the client is in, and here is the server's own proof, {@link Auth#serverProof}. */
public record AuthOk(byte[] mac) implements Message {
  @Override
  public MessageType type() {
    return MessageType.AUTH_OK;
  }

  @Override
  public int encodedLength() {
    return Protocol.MAC_BYTES;
  }

  @Override
  public void encode(ByteBuffer buf) {
    Wire.putBytes(buf, mac, Protocol.MAC_BYTES, "AUTH_OK mac");
  }

  public static AuthOk decode(ByteBuffer buf) {
    return new AuthOk(Wire.getBytes(buf, Protocol.MAC_BYTES, "AUTH_OK mac"));
  }
}
