package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * One file or directory as carried on the wire; {@code path} is relative to the root.
 * {@code version} is the file's as the same stat saw it, for its READs to name
 * ({@link FileVersion#ANY} for a directory).
 */
public record FileMeta(String path, long length, long modifiedMillis, boolean directory,
    FileVersion version) {
  /** Smallest encoding: empty path and file id. Bounds entry counts before decoding a list. */
  static final int MIN_ENCODED_LENGTH = 4 + 8 + 8 + 1 + FileVersion.MIN_ENCODED_LENGTH;

  int encodedLength() {
    return Wire.stringLength(path) + 8 + 8 + 1 + version.encodedLength();
  }

  void encode(ByteBuffer buf) {
    Wire.putString(buf, path);
    buf.putLong(length);
    buf.putLong(modifiedMillis);
    buf.put((byte) (directory ? 1 : 0));
    version.encode(buf);
  }

  static FileMeta decode(ByteBuffer buf) {
    String path = Wire.getString(buf, Protocol.MAX_PATH_BYTES, "entry path");
    long length = Wire.nonNegative(buf.getLong(), "entry length");
    long modified = buf.getLong();
    boolean directory = Wire.getBoolean(buf, "entry directory flag");
    return new FileMeta(path, length, modified, directory, FileVersion.decode(buf, "entry version"));
  }
}
