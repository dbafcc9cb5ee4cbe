package io.gpudirect.protocol;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Spark's checksums of the reduce partitions a window of a shuffle block holds bytes of, as the
 * map task's writer computed them over the bytes it wrote to the data file (the file
 * {@code shuffle_S_M_0.checksum.ALGORITHM} beside the index): what the client checks a window's
 * bytes against instead of a CRC32C the server would have to compute by reading them a second
 * time. Partitions of no bytes are left out (nothing to check), so the ones listed lie end to
 * end: the first starts at {@code firstStart} (within the block, at or before the window's
 * offset), each next where the one before ends, and together they reach to or past the window's
 * end. Each is named by its reduce id, so that a mismatch names it. A partition that crosses the
 * window's edge is checked once all its windows are in.
 *
 * <p>{@link #NONE} (algorithm null): the server had no usable checksums for the block, and the
 * answer's trailer carries the window's CRC32C as before protocol version 8.
 *
 * <pre>
 * checksums := algorithm:int8 (0 none)
 *              [firstStart:int64 count:int32 (reduceId:int32 length:int64 checksum:int32)*count]
 * </pre>
 */
public record PartitionChecksums(ChecksumAlgorithm algorithm, long firstStart, int[] reduceIds,
    long[] lengths, int[] checksums) {
  public static final PartitionChecksums NONE =
      new PartitionChecksums(null, 0, new int[0], new long[0], new int[0]);
  /**
   * Most partitions one window lists (16 bytes each), so that RDMA_SHUFFLE_DONE still fits the
   * smallest control slot (8 KiB) beside the rest of the window's header. A server answers a
   * block of more partitions with CRC32C, every window of it, so that no partition is left with
   * windows of both kinds.
   */
  public static final int MAX_PARTITIONS = 448;
  /** The most bytes they take in a frame. */
  public static final int MAX_ENCODED_BYTES = 1 + 8 + 4 + MAX_PARTITIONS * (4 + 8 + 4);

  public PartitionChecksums {
    if (lengths.length != checksums.length || reduceIds.length != checksums.length) {
      throw new IllegalArgumentException(reduceIds.length + " reduce ids and " + lengths.length
          + " lengths for " + checksums.length + " checksums");
    }
  }

  /** Whether the answer carries checksums (else its trailer carries a CRC32C). */
  public boolean present() {
    return algorithm != null;
  }

  public int count() {
    return lengths.length;
  }

  /**
   * Whether these are the non-empty partitions that hold the bytes {@code [offset, offset +
   * length)} of {@code block}, of {@code blockLength} bytes, and no others: the first holds the
   * window's first byte, the last its last, all within the block, their reduce ids the block's
   * and rising. Nothing for a window of no bytes.
   */
  public boolean fits(ShuffleBlockId block, long offset, int length, long blockLength) {
    if (!present()) {
      return true;
    }
    if (length == 0 || count() == 0 || firstStart < 0 || firstStart > offset) {
      return false;
    }
    long end = firstStart;
    for (int i = 0; i < count(); i++) {
      if (lengths[i] <= 0 || (i > 0 && end >= offset + length) || lengths[i] > blockLength - end
          || reduceIds[i] < (i == 0 ? block.startReduceId() : reduceIds[i - 1] + 1)
          || reduceIds[i] >= block.endReduceId()) {
        return false;
      }
      end += lengths[i];
      if (i == 0 && end <= offset) {
        return false;
      }
    }
    return end >= offset + length;
  }

  int encodedLength() {
    return present() ? 1 + 8 + 4 + count() * (4 + 8 + 4) : 1;
  }

  void encode(ByteBuffer buf) {
    buf.put((byte) (present() ? algorithm.code() : 0));
    if (present()) {
      buf.putLong(firstStart);
      buf.putInt(count());
      for (int i = 0; i < count(); i++) {
        buf.putInt(reduceIds[i]);
        buf.putLong(lengths[i]);
        buf.putInt(checksums[i]);
      }
    }
  }

  static PartitionChecksums decode(ByteBuffer buf, String field) {
    int code = buf.get();
    if (code == 0) {
      return NONE;
    }
    ChecksumAlgorithm algorithm = ChecksumAlgorithm.ofCode(code, field + " algorithm");
    long firstStart = Wire.nonNegative(buf.getLong(), field + " firstStart");
    int count = buf.getInt();
    if (count < 1 || count > MAX_PARTITIONS) {
      throw new ProtocolException(field + " lists " + count + " partitions; 1 to " + MAX_PARTITIONS
          + " expected");
    }
    int[] reduceIds = new int[count];
    long[] lengths = new long[count];
    int[] checksums = new int[count];
    for (int i = 0; i < count; i++) {
      reduceIds[i] = buf.getInt();
      lengths[i] = Wire.nonNegative(buf.getLong(), field + " length");
      checksums[i] = buf.getInt();
    }
    return new PartitionChecksums(algorithm, firstStart, reduceIds, lengths, checksums);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PartitionChecksums p && algorithm == p.algorithm && firstStart == p.firstStart
        && Arrays.equals(reduceIds, p.reduceIds) && Arrays.equals(lengths, p.lengths)
        && Arrays.equals(checksums, p.checksums);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * java.util.Objects.hashCode(algorithm) + Long.hashCode(firstStart))
        + Arrays.hashCode(reduceIds) + Arrays.hashCode(lengths) + Arrays.hashCode(checksums);
  }

  @Override
  public String toString() {
    return present() ? algorithm + " checksums of " + count() + " partition(s) from byte " + firstStart
        : "no partition checksums";
  }
}
