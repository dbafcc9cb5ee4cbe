package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/** One file or directory as carried on the wire; {@code path} is relative to the root. */
public record FileMeta(String path, long length, long modifiedMillis, boolean directory) {
  /** Smallest encoding: empty path. Bounds entry counts before decoding a list. */
  static final int MIN_ENCODED_LENGTH = 4 + 8 + 8 + 1;

  int encodedLength() {
    return Wire.stringLength(path) + 8 + 8 + 1;
  }

  void encode(ByteBuffer buf) {
    Wire.putString(buf, path);
    buf.putLong(length);
    buf.putLong(modifiedMillis);
    buf.put((byte) (directory ? 1 : 0));
  }

  static FileMeta decode(ByteBuffer buf) {
    String path = Wire.getString(buf, Protocol.MAX_PATH_BYTES, "entry path");
    long length = Wire.nonNegative(buf.getLong(), "entry length");
    long modified = buf.getLong();
    return new FileMeta(path, length, modified, Wire.getBoolean(buf, "entry directory flag"));
  }
}
