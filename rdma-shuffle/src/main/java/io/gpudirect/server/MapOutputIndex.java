package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.ShuffleBlockId;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A map output's index file, as Spark's {@code IndexShuffleBlockResolver} writes it: for a map
 * output of {@code n} reduce partitions, {@code n + 1} big-endian longs, the offsets in the data
 * file where each partition starts and, last, where the data ends; partition {@code r} is
 * {@code [offset[r], offset[r + 1])}. Spark trusts the two offsets it reads. Here an index is
 * served only when all of it is well-formed: 8-byte offsets of at least one partition, the first
 * 0, none smaller than the one before, the last equal to the data file's length. Anything less
 * is refused as {@link ErrorCode#CORRUPT_MAP_OUTPUT}: an offset that went back would serve some
 * partition another's bytes, and a last offset beyond the data a truncated file.
 *
 * <p>Checking all of it reads the whole index (8 bytes per partition), which a reducer of a
 * shuffle of 100,000 partitions would pay for each of its blocks; so the versions of index and
 * data found good are remembered ({@link Checked}), and a block of a pair checked before costs
 * one read of its own offsets.
 */
final class MapOutputIndex {
  /** Pairs of index and data file versions found good, kept at most. */
  static final int CHECKED_PAIRS = 16_384;
  /** The most partitions a map output can have: reduce ids are ints. */
  private static final long MAX_PARTITIONS = Integer.MAX_VALUE;

  /** Bytes {@code [start, end)} of the data file. */
  record Range(long start, long end) {
    long length() {
      return end - start;
    }
  }

  /** The index and data versions found good: a bounded set, the least recently used forgotten. */
  static final class Checked {
    private record Pair(FileVersion index, FileVersion data) {}

    private final Map<Pair, Boolean> pairs = new LinkedHashMap<>(64, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<Pair, Boolean> eldest) {
        return size() > CHECKED_PAIRS;
      }
    };

    synchronized boolean contains(FileVersion index, FileVersion data) {
      return pairs.get(new Pair(index, data)) != null;
    }

    synchronized void add(FileVersion index, FileVersion data) {
      pairs.put(new Pair(index, data), Boolean.TRUE);
    }
  }

  private MapOutputIndex() {}

  /**
   * The range of {@code block} in the data file, from the index open as {@code index} (of
   * {@code indexVersion}, {@code indexSize} bytes), for a data file of {@code dataSize} bytes and
   * {@code dataVersion} ({@link FileVersion#ANY} and size -1 where there is none). Versions with
   * no file id (a file system without them) are never remembered as checked. {@code scratch}: a
   * buffer of the connection's, a multiple of 8 bytes long, reused. Refusals say what is wrong
   * with the index {@code where}; the caller names the block.
   */
  static Range range(ShuffleBlockId block, String where, FileChannel index, FileVersion indexVersion,
      long indexSize, FileVersion dataVersion, long dataSize, Checked checked, ByteBuffer scratch) {
    if (indexSize % 8 != 0 || indexSize < 16 || indexSize / 8 - 1 > MAX_PARTITIONS) {
      throw corrupt(where, "it is " + indexSize + " bytes, not the 8-byte offsets of one or more"
          + " partitions and the end");
    }
    long partitions = indexSize / 8 - 1;
    if (block.endReduceId() > partitions) {
      throw new RequestRefusedException(ErrorCode.OUT_OF_RANGE, "there is no such block: its map"
          + " output has " + partitions + " reduce partitions (index " + where + ")");
    }
    boolean remembered = !indexVersion.fileId().isEmpty() && checked.contains(indexVersion, dataVersion);
    Range range = remembered ? readRange(block, where, index, scratch)
        : checkAll(block, where, index, partitions, dataSize, scratch);
    if (!remembered && !indexVersion.fileId().isEmpty()) {
      checked.add(indexVersion, dataVersion);
    }
    return range;
  }

  /** The block's two offsets, of an index checked before. */
  private static Range readRange(ShuffleBlockId block, String where, FileChannel index,
      ByteBuffer scratch) {
    long start = readLong(where, index, block.startReduceId() * 8L, scratch);
    long end = readLong(where, index, block.endReduceId() * 8L, scratch);
    return new Range(start, end);
  }

  /** Reads the whole index, checking every offset; the block's range on the way. */
  private static Range checkAll(ShuffleBlockId block, String where, FileChannel index,
      long partitions, long dataSize, ByteBuffer scratch) {
    long previous = 0;
    long start = -1;
    long end = -1;
    long at = 0;
    for (long pos = 0; pos <= partitions * 8; ) {
      scratch.clear().limit((int) Math.min(scratch.capacity(), (partitions + 1) * 8 - pos));
      fill(where, index, pos, scratch);
      scratch.flip();
      while (scratch.hasRemaining()) {
        long offset = scratch.getLong();
        if (at == 0 && offset != 0) {
          throw corrupt(where, "its first offset is " + offset + ", not 0");
        }
        if (offset < previous) {
          throw corrupt(where, "the offset of partition " + at + " is " + offset
              + ", before the one of partition " + (at - 1) + " (" + previous + ")");
        }
        if (at == block.startReduceId()) {
          start = offset;
        }
        if (at == block.endReduceId()) {
          end = offset;
        }
        previous = offset;
        at++;
      }
      pos += scratch.limit();
    }
    if (previous != Math.max(dataSize, 0)) {
      throw corrupt(where, "its last offset is " + previous + " but " + (dataSize < 0
          ? "there is no data file" : "the data file has " + dataSize + " bytes (truncated, or"
          + " not the index's data file)"));
    }
    return new Range(start, end);
  }

  /**
   * The offsets of the partitions of {@code block}, of an index checked already (so never going
   * back): where each starts and, last, where the block ends. {@code scratch}: at least
   * {@code (partitions + 1) * 8} bytes.
   */
  static long[] offsets(ShuffleBlockId block, String where, FileChannel index, ByteBuffer scratch) {
    int n = block.partitions() + 1;
    scratch.clear().limit(n * 8);
    fill(where, index, block.startReduceId() * 8L, scratch);
    long[] offsets = new long[n];
    for (int i = 0; i < n; i++) {
      offsets[i] = scratch.getLong(i * 8);
    }
    return offsets;
  }

  private static long readLong(String where, FileChannel index, long pos, ByteBuffer scratch) {
    scratch.clear().limit(8);
    fill(where, index, pos, scratch);
    return scratch.getLong(0);
  }

  /** Fills {@code into} from {@code pos} of the index; an index that ends early is refused. */
  private static void fill(String where, FileChannel index, long pos, ByteBuffer into) {
    try {
      while (into.hasRemaining()) {
        if (index.read(into, pos + into.position()) < 0) {
          throw corrupt(where, "it ended at byte " + (pos + into.position())
              + " while being read");
        }
      }
    } catch (IOException e) {
      throw new RequestRefusedException(ErrorCode.IO_ERROR, "cannot read its index " + where
          + ": " + e, e);
    }
  }

  private static RequestRefusedException corrupt(String where, String what) {
    return new RequestRefusedException(ErrorCode.CORRUPT_MAP_OUTPUT, "its map output's index "
        + where + " is not usable: " + what);
  }
}
