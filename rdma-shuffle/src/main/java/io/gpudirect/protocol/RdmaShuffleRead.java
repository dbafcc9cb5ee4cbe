package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Client → server over the queue pair: the {@link ShuffleRead} {@code read} (a window of a
 * shuffle block, checked and resolved by the server exactly as over TCP), its bytes to be
 * RDMA-written to {@code remoteAddress} in the client's memory region {@code rkey}, which has
 * room for {@code read.maxLength()} bytes. The server answers on the queue pair with
 * {@link RdmaShuffleDone} after the last WRITE, or with an {@link ErrorResponse} naming the block.
 */
public record RdmaShuffleRead(ShuffleRead read, long remoteAddress, int rkey) implements Request {
  @Override
  public MessageType type() {
    return MessageType.RDMA_SHUFFLE_READ;
  }

  @Override
  public long requestId() {
    return read.requestId();
  }

  @Override
  public int encodedLength() {
    return read.encodedLength() + 8 + 4;
  }

  @Override
  public void encode(ByteBuffer buf) {
    read.encode(buf);
    buf.putLong(remoteAddress);
    buf.putInt(rkey);
  }

  public static RdmaShuffleRead decode(ByteBuffer buf) {
    ShuffleRead read = ShuffleRead.decode(buf);
    long address = buf.getLong();
    int rkey = buf.getInt();
    return new RdmaShuffleRead(read, address, rkey);
  }
}
