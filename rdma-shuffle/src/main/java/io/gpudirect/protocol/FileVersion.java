package io.gpudirect.protocol;

import java.io.Serializable;
import java.nio.ByteBuffer;
import java.time.Instant;

/**
 * Which contents of a file a reader means: the file's identity (device and inode, as the
 * server's file system gives them), its size, its modification time and its change time
 * ({@code ctime}), in nanoseconds, all from one {@code stat} of the file on the server. STAT and
 * LIST hand it out; every READ names it back, and the server refuses a READ of a file whose
 * version is no longer that one ({@link ErrorCode#FILE_CHANGED}), so that a reader never gets
 * bytes of two versions of a file in one read, or across the reads of one scan.
 *
 * <p>{@code fileId} is opaque to the client: the text of the server's {@code fileKey()}
 * ({@code (dev=803,ino=1234)} on Linux), equal exactly when the device and inode are; empty
 * where the file system has no file keys (size and times still tell most changes apart).
 *
 * <p>Why the change time: a writer may set the modification time to anything it likes
 * ({@code utimensat}, {@code touch -d}), so one who rewrites a range in place and puts the
 * exact time back leaves identity, size and modification time as they were. The kernel sets
 * the change time to its own clock at every change to the file, of its data or its metadata
 * (a {@code chmod} too), and no call sets it to a chosen value. {@code changedNanos} is
 * {@link #CHANGE_TIME_UNKNOWN} where the server cannot read it (see the server's log).
 *
 * <p>What it cannot see: a change that lands within the same tick of the file system's clock
 * (a few milliseconds on Linux before 6.13, finer where the kernel gives fine-grained stamps)
 * as the change before the stat leaves both times as they were. That is git's "racy" case; a
 * writer that is done before the stat, or rewrites the file by a rename (as Spark and Hadoop
 * writers do), is always seen. docs/security.md says what else is out of its reach.
 */
public record FileVersion(String fileId, long size, long modifiedNanos, long changedNanos)
    implements Serializable {
  /** {@code changedNanos} of a server that cannot read change times. */
  public static final long CHANGE_TIME_UNKNOWN = Long.MIN_VALUE;
  /** Names no version: a READ with it reads whatever the path names when it arrives. */
  public static final FileVersion ANY = new FileVersion("", -1, Long.MIN_VALUE, CHANGE_TIME_UNKNOWN);
  /** Longest {@code fileId} accepted off the wire; a Linux file key is about 30 bytes. */
  static final int MAX_FILE_ID_BYTES = 256;
  /** Smallest encoding: empty id. */
  static final int MIN_ENCODED_LENGTH = 4 + 8 + 8 + 8;

  public FileVersion {
    if (Wire.utf8(fileId).length > MAX_FILE_ID_BYTES) {
      throw new IllegalArgumentException("file id longer than " + MAX_FILE_ID_BYTES + " bytes");
    }
  }

  /** False for {@link #ANY}. */
  public boolean isChecked() {
    return !equals(ANY);
  }

  /** For people: identity, size, modification and change times. */
  public String describe() {
    if (!isChecked()) {
      return "any version";
    }
    return (fileId.isEmpty() ? "" : "inode " + fileId + ", ") + size + " bytes, modified "
        + Instant.EPOCH.plusNanos(modifiedNanos)
        + (changedNanos == CHANGE_TIME_UNKNOWN ? "" : ", changed " + Instant.EPOCH.plusNanos(changedNanos));
  }

  /** One line for a Hadoop conf: size, times, id ({@link #parse}). */
  public String token() {
    return size + ":" + modifiedNanos + ":" + changedNanos + ":" + fileId;
  }

  /** The version {@link #token} wrote. */
  public static FileVersion parse(String token) {
    int a = token.indexOf(':');
    int b = a < 0 ? -1 : token.indexOf(':', a + 1);
    int c = b < 0 ? -1 : token.indexOf(':', b + 1);
    if (c < 0) {
      throw new IllegalArgumentException("Not a file version: '" + token + "'");
    }
    return new FileVersion(token.substring(c + 1), Long.parseLong(token.substring(0, a)),
        Long.parseLong(token.substring(a + 1, b)), Long.parseLong(token.substring(b + 1, c)));
  }

  int encodedLength() {
    return Wire.stringLength(fileId) + 8 + 8 + 8;
  }

  void encode(ByteBuffer buf) {
    Wire.putString(buf, fileId);
    buf.putLong(size);
    buf.putLong(modifiedNanos);
    buf.putLong(changedNanos);
  }

  static FileVersion decode(ByteBuffer buf, String what) {
    String id = Wire.getString(buf, MAX_FILE_ID_BYTES, what + " file id");
    long size = buf.getLong();
    long modified = buf.getLong();
    long changed = buf.getLong();
    if (size < -1) {
      throw new ProtocolException("Negative " + what + " size " + size);
    }
    return new FileVersion(id, size, modified, changed);
  }
}
