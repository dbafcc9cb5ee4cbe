package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Server → client answer to {@link RdmaSetup}: the RDMA CM port to connect to (same host as
 * the TCP connection), a single-use {@code token} the queue pair must present in
 * {@link RdmaBind}, the credits granted (receives the server keeps posted for this queue pair,
 * so the client never has more RDMA_READs outstanding) and the size of one control message
 * slot on the queue pair.
 */
public record RdmaSetupAck(long requestId, int rdmaPort, byte[] token, int credits, int slotBytes)
    implements Response {
  public static final int TOKEN_BYTES = 16;

  @Override
  public MessageType type() {
    return MessageType.RDMA_SETUP_ACK;
  }

  @Override
  public int encodedLength() {
    return 8 + 4 + TOKEN_BYTES + 4 + 4;
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    buf.putInt(rdmaPort);
    Wire.putBytes(buf, token, TOKEN_BYTES, "RDMA_SETUP_ACK token");
    buf.putInt(credits);
    buf.putInt(slotBytes);
  }

  public static RdmaSetupAck decode(ByteBuffer buf) {
    long id = buf.getLong();
    int port = buf.getInt();
    if (port <= 0 || port > 65535) {
      throw new ProtocolException("RDMA_SETUP_ACK port must be 1..65535: " + port);
    }
    byte[] token = Wire.getBytes(buf, TOKEN_BYTES, "RDMA_SETUP_ACK token");
    int credits = buf.getInt();
    if (credits <= 0) {
      throw new ProtocolException("RDMA_SETUP_ACK credits must be positive: " + credits);
    }
    int slot = buf.getInt();
    if (slot < 1024 || slot > Protocol.MAX_RDMA_SLOT_BYTES) {
      throw new ProtocolException("RDMA_SETUP_ACK slotBytes must be 1024.." + Protocol.MAX_RDMA_SLOT_BYTES + ": " + slot);
    }
    return new RdmaSetupAck(id, port, token, credits, slot);
  }
}
