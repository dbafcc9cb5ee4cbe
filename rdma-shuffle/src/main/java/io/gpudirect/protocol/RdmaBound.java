package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Server → client, the server's first SEND on a queue pair, once the {@link RdmaBind} was
 * taken: the receives for the credits of {@link RdmaSetupAck} are posted now. Before the BIND
 * the server holds one receive for the BIND and nothing else for a peer it does not know, so a
 * client sends no RDMA_READ before this arrives.
 */
public record RdmaBound() implements Message {
  @Override
  public MessageType type() {
    return MessageType.RDMA_BOUND;
  }

  @Override
  public int encodedLength() {
    return 0;
  }

  @Override
  public void encode(ByteBuffer buf) {}

  public static RdmaBound decode(ByteBuffer buf) {
    return new RdmaBound();
  }
}
