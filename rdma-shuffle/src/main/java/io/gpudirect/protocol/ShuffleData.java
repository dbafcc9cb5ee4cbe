package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Header of a {@link ShuffleRead} answer: the whole block is {@code blockLength} bytes, read
 * from the data file of {@code version} ({@link FileVersion#ANY} for an empty map output, which
 * Spark writes with no data file); exactly {@code length} payload bytes follow the frame, the
 * block's bytes from {@code offset}, then the trailer of {@link ReadData}. Unlike READ_DATA it is
 * checksummed as every other frame: its fields are not all the request's, so the client could
 * not check them against it. {@code checks}: Spark's checksums of the partitions the window holds
 * bytes of, which the client checks them against; the trailer then carries no CRC32C. Without
 * them ({@link PartitionChecksums#NONE}) it does, when CRC32C was negotiated.
 */
public record ShuffleData(long requestId, long blockLength, FileVersion version, long offset,
    int length, PartitionChecksums checks) implements Response {
  /** An answer whose trailer carries the window's CRC32C (where negotiated). */
  public ShuffleData(long requestId, long blockLength, FileVersion version, long offset, int length) {
    this(requestId, blockLength, version, offset, length, PartitionChecksums.NONE);
  }

  @Override
  public MessageType type() {
    return MessageType.SHUFFLE_DATA;
  }

  @Override
  public int encodedLength() {
    return 8 + 8 + version.encodedLength() + 8 + 4 + checks.encodedLength();
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    buf.putLong(blockLength);
    version.encode(buf);
    buf.putLong(offset);
    buf.putInt(length);
    checks.encode(buf);
  }

  /**
   * Whether this is a well-formed answer to {@code r}: the window asked for, as long as the block
   * allows and no longer, of the version asked for when one was named, with checksums (if any) of
   * exactly the partitions it holds bytes of.
   */
  public boolean answers(ShuffleRead r) {
    long end = offset + length;
    return requestId == r.requestId() && offset == r.offset() && length <= r.maxLength()
        && end <= blockLength && (length == r.maxLength() || end == blockLength)
        && (!r.version().isChecked() || r.version().equals(version))
        && checks.fits(r.block(), offset, length, blockLength);
  }

  public static ShuffleData decode(ByteBuffer buf) {
    long id = buf.getLong();
    long blockLength = Wire.nonNegative(buf.getLong(), "SHUFFLE_DATA blockLength");
    FileVersion version = FileVersion.decode(buf, "SHUFFLE_DATA version");
    long offset = Wire.nonNegative(buf.getLong(), "SHUFFLE_DATA offset");
    int length = (int) Wire.nonNegative(buf.getInt(), "SHUFFLE_DATA length");
    PartitionChecksums checks = PartitionChecksums.decode(buf, "SHUFFLE_DATA checksums");
    return new ShuffleData(id, blockLength, version, offset, length, checks);
  }
}
