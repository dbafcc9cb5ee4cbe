package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Bytes {@code [offset, offset + length)} of a file, of the file's {@code version} (from STAT
 * or LIST; {@link FileVersion#ANY} for whatever the path names now). The server answers with
 * {@link ReadData} followed by exactly {@code length} payload bytes and a trailer, or with an
 * {@link ErrorResponse}: {@link ErrorCode#FILE_CHANGED} when the file is not that version.
 */
public record ReadRequest(long requestId, String path, FileVersion version, long offset, int length)
    implements Request {
  /** A READ of whatever the path names when it arrives ({@link FileVersion#ANY}). */
  public ReadRequest(long requestId, String path, long offset, int length) {
    this(requestId, path, FileVersion.ANY, offset, length);
  }

  @Override
  public MessageType type() {
    return MessageType.READ;
  }

  @Override
  public int encodedLength() {
    return 8 + Wire.stringLength(path) + version.encodedLength() + 8 + 4;
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    Wire.putString(buf, path);
    version.encode(buf);
    buf.putLong(offset);
    buf.putInt(length);
  }

  public static ReadRequest decode(ByteBuffer buf) {
    long id = buf.getLong();
    String path = Wire.getString(buf, Protocol.MAX_PATH_BYTES, "READ path");
    FileVersion version = FileVersion.decode(buf, "READ version");
    long offset = Wire.nonNegative(buf.getLong(), "READ offset");
    int length = (int) Wire.nonNegative(buf.getInt(), "READ length");
    return new ReadRequest(id, path, version, offset, length);
  }
}
