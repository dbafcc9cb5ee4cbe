package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Client → server, the first SEND on a new queue pair: the token from {@link RdmaSetupAck}.
 * The server serves nothing on a queue pair before it has matched the token to one of its
 * authenticated TCP connections; each token works once.
 */
public record RdmaBind(byte[] token) implements Message {
  @Override
  public MessageType type() {
    return MessageType.RDMA_BIND;
  }

  @Override
  public int encodedLength() {
    return RdmaSetupAck.TOKEN_BYTES;
  }

  @Override
  public void encode(ByteBuffer buf) {
    Wire.putBytes(buf, token, RdmaSetupAck.TOKEN_BYTES, "RDMA_BIND token");
  }

  public static RdmaBind decode(ByteBuffer buf) {
    return new RdmaBind(Wire.getBytes(buf, RdmaSetupAck.TOKEN_BYTES, "RDMA_BIND token"));
  }
}
