package io.gpudirect.protocol;

import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

/**
 * Which contents of a file a reader means: the file's identity (device and inode, as the
 * server's file system gives them), its size and its modification time in nanoseconds, all
 * from one {@code stat} of the file on the server. STAT and LIST hand it out; every READ names
 * it back, and the server refuses a READ of a file whose version is no longer that one
 * ({@link ErrorCode#FILE_CHANGED}), so that a reader never gets bytes of two versions of a
 * file in one read, or across the reads of one scan.
 *
 * <p>{@code fileId} is opaque to the client: the text of the server's {@code fileKey()}
 * ({@code (dev=803,ino=1234)} on Linux), equal exactly when the device and inode are; empty
 * where the file system has no file keys (size and time still tell most changes apart).
 *
 * <p>What it cannot see: a write in place that keeps the size and lands within the same tick
 * of the file system's clock (a few milliseconds on Linux) as the write before the stat leaves
 * the modification time as it was. That is git's "racy" case; a writer that is done before the
 * stat, or rewrites the file by a rename (as Spark and Hadoop writers do), is always seen.
 */
public record FileVersion(String fileId, long size, long modifiedNanos) implements Serializable {
  /** Names no version: a READ with it reads whatever the path names when it arrives. */
  public static final FileVersion ANY = new FileVersion("", -1, Long.MIN_VALUE);
  /** Longest {@code fileId} accepted off the wire; a Linux file key is about 30 bytes. */
  static final int MAX_FILE_ID_BYTES = 256;
  /** Smallest encoding: empty id. */
  static final int MIN_ENCODED_LENGTH = 4 + 8 + 8;

  public FileVersion {
    if (Wire.utf8(fileId).length > MAX_FILE_ID_BYTES) {
      throw new IllegalArgumentException("file id longer than " + MAX_FILE_ID_BYTES + " bytes");
    }
  }

  /** The version of a file as the server's {@code stat} saw it. */
  public static FileVersion of(BasicFileAttributes a) {
    Object key = a.fileKey();
    return new FileVersion(key == null ? "" : key.toString(), a.size(),
        a.lastModifiedTime().to(TimeUnit.NANOSECONDS));
  }

  /** False for {@link #ANY}. */
  public boolean isChecked() {
    return !equals(ANY);
  }

  /** For people: identity, size and modification time. */
  public String describe() {
    if (!isChecked()) {
      return "any version";
    }
    return (fileId.isEmpty() ? "" : "inode " + fileId + ", ") + size + " bytes, modified "
        + Instant.EPOCH.plusNanos(modifiedNanos);
  }

  /** One line for a Hadoop conf: size, time, id ({@link #parse}). */
  public String token() {
    return size + ":" + modifiedNanos + ":" + fileId;
  }

  /** The version {@link #token} wrote. */
  public static FileVersion parse(String token) {
    int a = token.indexOf(':');
    int b = token.indexOf(':', a + 1);
    if (a < 0 || b < 0) {
      throw new IllegalArgumentException("Not a file version: '" + token + "'");
    }
    return new FileVersion(token.substring(b + 1), Long.parseLong(token.substring(0, a)),
        Long.parseLong(token.substring(a + 1, b)));
  }

  int encodedLength() {
    return Wire.stringLength(fileId) + 8 + 8;
  }

  void encode(ByteBuffer buf) {
    Wire.putString(buf, fileId);
    buf.putLong(size);
    buf.putLong(modifiedNanos);
  }

  static FileVersion decode(ByteBuffer buf, String what) {
    String id = Wire.getString(buf, MAX_FILE_ID_BYTES, what + " file id");
    long size = buf.getLong();
    long modified = buf.getLong();
    if (size < -1) {
      throw new ProtocolException("Negative " + what + " size " + size);
    }
    return new FileVersion(id, size, modified);
  }
}
