package io.gpudirect.client;

import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.transport.PartitionChecksumMismatchException;
import io.gpudirect.transport.PartitionPiece;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The reduce partitions of one shuffle block that cross the edges of its windows: each window
 * checks the partitions it holds whole against Spark's checksums, and leaves here the checksums
 * of its parts of the others ({@link PartitionPiece}); once every window is in, each such
 * partition's parts are combined in order (no byte is read again) and compared with Spark's.
 * Thread-safe: windows complete on their connections' threads.
 */
final class CrossingPartitions {
  private final ShuffleBlockId block;
  private final String serverName;
  private final List<PartitionPiece> pieces = new ArrayList<>();

  CrossingPartitions(ShuffleBlockId block, String serverName) {
    this.block = block;
    this.serverName = serverName;
  }

  /** The parts a window held, once it is in and its own partitions checked. */
  synchronized void add(List<PartitionPiece> windowPieces) {
    pieces.addAll(windowPieces);
  }

  /**
   * After the block's last window: throws a {@link PartitionChecksumMismatchException} for the
   * first partition whose parts do not make Spark's checksum, or, for one whose parts do not
   * cover it (a window answered without the checksums the others had: the map output's checksum
   * file came or went meanwhile), a {@link FileChangedException}, as for a map output written
   * again while it was read.
   */
  synchronized void check() {
    Map<Long, List<PartitionPiece>> byPartition = new TreeMap<>();
    for (PartitionPiece p : pieces) {
      byPartition.computeIfAbsent(p.partitionStart(), k -> new ArrayList<>()).add(p);
    }
    for (List<PartitionPiece> parts : byPartition.values()) {
      parts.sort(Comparator.comparingLong(PartitionPiece::offset));
      PartitionPiece first = parts.get(0);
      long covered = 0;
      int value = 0;
      for (PartitionPiece p : parts) {
        if (p.offset() != covered || p.partitionLength() != first.partitionLength()
            || p.expected() != first.expected() || p.algorithm() != first.algorithm()) {
          throw uncovered(first);
        }
        value = covered == 0 ? p.value() : p.algorithm().combine(value, p.value(), p.length());
        covered += p.length();
      }
      if (covered != first.partitionLength()) {
        throw uncovered(first);
      }
      if (value != first.expected()) {
        throw new PartitionChecksumMismatchException(block, first.reduceId(), first.partitionLength(),
            first.algorithm(), "from gpudirect server " + serverName, first.expected(), value);
      }
    }
  }

  /** As a map output written again while read: a fetch failure that reruns its map task. */
  private FileChangedException uncovered(PartitionPiece p) {
    return new FileChangedException(serverName, block.name(), FileVersion.ANY, "Cannot fetch shuffle block "
        + block.name() + " (" + block.describe() + ") on gpudirect server " + serverName + ": its windows came"
        + " with different checksums of reduce partition " + p.reduceId() + ", or some without: its map"
        + " output's checksum file changed while it was read", null);
  }
}
