package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Server → client answer to {@link Hello}: the version spoken, the capabilities both sides
 * have, whether a secret is required (then {@code serverNonce} is the challenge and the client
 * must send {@link AuthResponse} before anything else) and the largest READ it accepts.
 */
public record HelloAck(int version, long capabilities, boolean authRequired, byte[] serverNonce,
    int maxReadLength) implements Message {
  public HelloAck {
    if (serverNonce.length != Protocol.NONCE_BYTES) {
      throw new IllegalArgumentException("server nonce must be " + Protocol.NONCE_BYTES + " bytes");
    }
  }

  @Override
  public MessageType type() {
    return MessageType.HELLO_ACK;
  }

  @Override
  public int encodedLength() {
    return 2 + 8 + 1 + Protocol.NONCE_BYTES + 4;
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putShort((short) version);
    buf.putLong(capabilities);
    buf.put((byte) (authRequired ? 1 : 0));
    buf.put(serverNonce);
    buf.putInt(maxReadLength);
  }

  public static HelloAck decode(ByteBuffer buf) {
    int version = buf.getShort() & 0xffff;
    long caps = buf.getLong();
    boolean auth = Wire.getBoolean(buf, "HELLO_ACK authRequired");
    byte[] nonce = Wire.getBytes(buf, Protocol.NONCE_BYTES, "HELLO_ACK server nonce");
    int maxRead = buf.getInt();
    if (maxRead < Protocol.MIN_MAX_READ_LENGTH) {
      throw new ProtocolException("HELLO_ACK maxReadLength must be at least "
          + Protocol.MIN_MAX_READ_LENGTH + ": " + maxRead);
    }
    return new HelloAck(version, caps, auth, nonce, maxRead);
  }
}
