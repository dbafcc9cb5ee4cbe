package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Server → client over the queue pair: the window {@code window} describes (as a
 * {@link ShuffleData} header does over TCP: the block's length, the data file's version, the
 * window's offset and length) has been written into the client's memory, every byte of it.
 * {@code crc32c} is the checksum of those bytes when CRC32C was negotiated on the TCP connection
 * ({@code hasCrc}).
 */
public record RdmaShuffleDone(ShuffleData window, boolean hasCrc, int crc32c) implements Response {
  @Override
  public MessageType type() {
    return MessageType.RDMA_SHUFFLE_DONE;
  }

  @Override
  public long requestId() {
    return window.requestId();
  }

  @Override
  public int encodedLength() {
    return window.encodedLength() + 1 + 4;
  }

  @Override
  public void encode(ByteBuffer buf) {
    window.encode(buf);
    buf.put((byte) (hasCrc ? 1 : 0));
    buf.putInt(crc32c);
  }

  public static RdmaShuffleDone decode(ByteBuffer buf) {
    ShuffleData window = ShuffleData.decode(buf);
    boolean crc = Wire.getBoolean(buf, "RDMA_SHUFFLE_DONE hasCrc");
    return new RdmaShuffleDone(window, crc, buf.getInt());
  }
}
