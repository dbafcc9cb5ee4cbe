package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Client → server over the TCP connection, after the handshake (and authentication): asks for
 * an RDMA queue pair tied to this connection, with up to {@code credits} reads outstanding.
 * Sent only when both sides have {@link Protocol#CAP_RDMA}. The server answers with
 * {@link RdmaSetupAck} or an {@link ErrorResponse}.
 */
public record RdmaSetup(long requestId, int credits) implements Request {
  @Override
  public MessageType type() {
    return MessageType.RDMA_SETUP;
  }

  @Override
  public int encodedLength() {
    return 8 + 4;
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    buf.putInt(credits);
  }

  public static RdmaSetup decode(ByteBuffer buf) {
    long id = buf.getLong();
    int credits = buf.getInt();
    if (credits <= 0) {
      throw new ProtocolException("RDMA_SETUP credits must be positive: " + credits);
    }
    return new RdmaSetup(id, credits);
  }
}
