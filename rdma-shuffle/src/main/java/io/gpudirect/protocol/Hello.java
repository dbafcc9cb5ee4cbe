package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/** Client → server, first frame: protocol version, capabilities and the client's nonce. */
public record Hello(int version, long capabilities, byte[] clientNonce) implements Message {
  public Hello {
    if (clientNonce.length != Protocol.NONCE_BYTES) {
      throw new IllegalArgumentException("client nonce must be " + Protocol.NONCE_BYTES + " bytes");
    }
  }

  @Override
  public MessageType type() {
    return MessageType.HELLO;
  }

  @Override
  public int encodedLength() {
    return 2 + 8 + Protocol.NONCE_BYTES;
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putShort((short) version);
    buf.putLong(capabilities);
    buf.put(clientNonce);
  }

  public static Hello decode(ByteBuffer buf) {
    int version = buf.getShort() & 0xffff;
    long caps = buf.getLong();
    return new Hello(version, caps, Wire.getBytes(buf, Protocol.NONCE_BYTES, "HELLO client nonce"));
  }
}
