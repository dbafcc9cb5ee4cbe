package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Client → server over the queue pair: bytes {@code [offset, offset + length)} of a file, to
 * be RDMA-written to {@code remoteAddress} in the client's memory region {@code rkey}. The
 * server answers on the queue pair with {@link RdmaReadDone} after the last WRITE (RC ordering
 * makes the data visible to the client before the answer) or with an {@link ErrorResponse}:
 * {@link ErrorCode#FILE_CHANGED} when the file is not {@code version}, before or after the WRITEs.
 */
public record RdmaRead(long requestId, String path, FileVersion version, long offset, int length, long remoteAddress,
    int rkey) implements Request {
  @Override
  public MessageType type() {
    return MessageType.RDMA_READ;
  }

  @Override
  public int encodedLength() {
    return 8 + Wire.stringLength(path) + version.encodedLength() + 8 + 4 + 8 + 4;
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    Wire.putString(buf, path);
    version.encode(buf);
    buf.putLong(offset);
    buf.putInt(length);
    buf.putLong(remoteAddress);
    buf.putInt(rkey);
  }

  public static RdmaRead decode(ByteBuffer buf) {
    long id = buf.getLong();
    String path = Wire.getString(buf, Protocol.MAX_PATH_BYTES, "RDMA_READ path");
    FileVersion version = FileVersion.decode(buf, "RDMA_READ version");
    long offset = Wire.nonNegative(buf.getLong(), "RDMA_READ offset");
    int length = (int) Wire.nonNegative(buf.getInt(), "RDMA_READ length");
    long address = buf.getLong();
    int rkey = buf.getInt();
    return new RdmaRead(id, path, version, offset, length, address, rkey);
  }
}
