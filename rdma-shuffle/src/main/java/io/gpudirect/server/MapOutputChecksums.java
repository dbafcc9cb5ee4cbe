package io.gpudirect.server;

import io.gpudirect.protocol.ChecksumAlgorithm;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.PartitionChecksums;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.server.RootDirectory.FoundFile;
import io.gpudirect.server.ShuffleDirectories.Placed;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spark's checksums of a map output's reduce partitions, for the window of a block being
 * answered: the file {@code shuffle_S_M_0.checksum.ALGORITHM} that Spark's sort shuffle writer
 * commits beside the index and data files ({@code IndexShuffleBlockResolver.getChecksumFile},
 * with {@code spark.shuffle.checksum.enabled}), one big-endian long per reduce partition, each
 * the checksum of that partition's bytes exactly as written to the data file. Reading a block's
 * is a pread of 8 bytes per partition; the server then sends no CRC32C of its own, which cost a
 * second read of every byte it sent.
 *
 * <p>The file is found where Spark's block manager puts it, and opened as the index and data
 * files are (read-only, from the open directory, no symlink followed), so it is confined to the
 * same directories. It is believed only if it is what Spark writes: 8 bytes for each partition
 * the index has, each value a 32-bit checksum; anything else, or no file (checksums off in
 * Spark, a map output of an older writer), and the window is answered with CRC32C as before, so
 * nothing goes unchecked. A file that lies is caught by the client as a mismatch, a fetch
 * failure, never taken as good bytes.
 */
final class MapOutputChecksums {
  private static final Logger LOG = LoggerFactory.getLogger(MapOutputChecksums.class);
  /** Said once per server: a map output's checksum file that is not Spark's. */
  private final AtomicBoolean warned = new AtomicBoolean();

  /**
   * The checksums of the partitions of {@code block} holding bytes of its window {@code [offset,
   * offset + length)}, a window of some bytes, or {@link PartitionChecksums#NONE} to answer it
   * with CRC32C. {@code offsets}: where each of the block's partitions (at most
   * {@link PartitionChecksums#MAX_PARTITIONS}) starts in the data file and, last, where the block
   * ends, from its index; {@code mapPartitions}: how many the map output has. Only where
   * {@code dirs} has a checksum algorithm.
   */
  PartitionChecksums of(ShuffleDirectories dirs, ShuffleBlockId block, long[] offsets, long mapPartitions,
      long offset, int length) {
    ChecksumAlgorithm algorithm = dirs.checksumAlgorithm();
    Placed placed = dirs.checksumFile(block);
    long[] values;
    try (OpenMapOutputs.Lease lease = dirs.open(placed)) {
      values = read(placed, lease.file(), block, mapPartitions);
    } catch (RequestRefusedException e) {
      if (e.code() != ErrorCode.NOT_FOUND) {
        unusable(placed, e.getMessage());
      }
      return PartitionChecksums.NONE;
    }
    if (values == null) {
      return PartitionChecksums.NONE;
    }
    return window(algorithm, block.startReduceId(), offsets, values, offset, length);
  }

  /** The block's checksums, or null (said why) when the file is not what Spark writes. */
  private long[] read(Placed placed, FoundFile file, ShuffleBlockId block, long mapPartitions) {
    if (file.size() != mapPartitions * 8) {
      unusable(placed, "it is " + file.size() + " bytes, not 8 for each of its map output's "
          + mapPartitions + " partitions");
      return null;
    }
    ByteBuffer b = ByteBuffer.allocate(block.partitions() * 8);
    FileChannel fc = file.channel();
    try {
      while (b.hasRemaining()) {
        if (fc.read(b, block.startReduceId() * 8L + b.position()) < 0) {
          unusable(placed, "it ended at byte " + (block.startReduceId() * 8L + b.position()) + " while read");
          return null;
        }
      }
    } catch (IOException e) {
      unusable(placed, e.toString());
      return null;
    }
    long[] values = new long[block.partitions()];
    for (int i = 0; i < values.length; i++) {
      values[i] = b.getLong(i * 8);
      if (values[i] < 0 || values[i] > 0xFFFF_FFFFL) {
        unusable(placed, "the checksum of partition " + (block.startReduceId() + i) + " is " + values[i]
            + ", not a 32-bit checksum");
        return null;
      }
    }
    return values;
  }

  /** The non-empty partitions that overlap the window, with their checksums. */
  private static PartitionChecksums window(ChecksumAlgorithm algorithm, int startReduceId, long[] offsets,
      long[] values, long offset, int length) {
    long blockStart = offsets[0];
    long end = offset + length;
    int first = -1;
    int last = -1;
    for (int i = 0; i < values.length; i++) {
      long start = offsets[i] - blockStart;
      long stop = offsets[i + 1] - blockStart;
      if (stop > start && stop > offset && start < end) {
        first = first < 0 ? i : first;
        last = i;
      }
    }
    int[] reduceIds = new int[last - first + 1];
    long[] lengths = new long[reduceIds.length];
    int[] checksums = new int[reduceIds.length];
    int n = 0;
    for (int i = first; i <= last; i++) {
      if (offsets[i + 1] > offsets[i]) {
        reduceIds[n] = startReduceId + i;
        lengths[n] = offsets[i + 1] - offsets[i];
        checksums[n++] = (int) values[i];
      }
    }
    return new PartitionChecksums(algorithm, offsets[first] - blockStart, Arrays.copyOf(reduceIds, n),
        Arrays.copyOf(lengths, n), Arrays.copyOf(checksums, n));
  }

  private void unusable(Placed placed, String why) {
    String message = "Not using Spark's shuffle checksum file " + placed.show() + " (" + why
        + "); its blocks are sent with the server's CRC32C instead";
    if (warned.compareAndSet(false, true)) {
      LOG.warn("{} (said once per server)", message);
    } else {
      LOG.debug(message);
    }
  }
}
