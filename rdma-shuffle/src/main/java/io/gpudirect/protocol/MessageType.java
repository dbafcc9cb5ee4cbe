package io.gpudirect.protocol;

/** The one-byte type id that starts every frame. Ids are part of the wire format: never reuse. */
public enum MessageType {
  HELLO(1),
  HELLO_ACK(2),
  AUTH_RESPONSE(3),
  AUTH_OK(4),
  LIST(5),
  LIST_RESPONSE(6),
  STAT(7),
  STAT_RESPONSE(8),
  READ(9),
  READ_DATA(10),
  ERROR(11),
  STATUS(12),
  STATUS_RESPONSE(13),
  /** Over TCP, after the handshake: the client asks for an RDMA queue pair. */
  RDMA_SETUP(14),
  RDMA_SETUP_ACK(15),
  /** Over the queue pair: its first message, tying it to an authenticated TCP connection. */
  RDMA_BIND(16),
  RDMA_READ(17),
  RDMA_READ_DONE(18),
  /**
   * Over the queue pair, server → client, its first message: the BIND was taken and the
   * receives for the client's credits are posted, so its RDMA_READs may go.
   */
  RDMA_BOUND(19),
  /** A shuffle block by its ids (version 6): the server finds its file and range. */
  SHUFFLE_READ(20),
  /** The answer to SHUFFLE_READ: its header, then the payload and trailer as READ_DATA's. */
  SHUFFLE_DATA(21),
  /** Over the queue pair (version 7): a SHUFFLE_READ whose bytes the server RDMA-writes. */
  RDMA_SHUFFLE_READ(22),
  /** Over the queue pair, the answer to RDMA_SHUFFLE_READ after its last WRITE. */
  RDMA_SHUFFLE_DONE(23);

  private final byte id;

  MessageType(int id) {
    this.id = (byte) id;
  }

  public byte id() {
    return id;
  }

  public static MessageType fromId(byte id) {
    for (MessageType t : values()) {
      if (t.id == id) {
        return t;
      }
    }
    throw new ProtocolException("Unknown message type " + (id & 0xff)
        + " (this peer speaks gpudirect protocol version " + Protocol.VERSION + ")");
  }
}
