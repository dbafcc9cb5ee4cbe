package io.gpudirect.transport;

import io.gpudirect.protocol.ShuffleData;
import java.util.List;

/**
 * A window of a shuffle block, in and checked: its answer's header and, where it was checked
 * against Spark's partition checksums, the pieces of partitions that cross its edges, which
 * only the block's other windows complete ({@link PartitionPiece}); none where it was checked
 * with a CRC32C (or not at all, without checksums).
 */
public record ReceivedWindow(ShuffleData header, List<PartitionPiece> pieces) {
  /** A window whose bytes leave nothing to check after it. */
  public static ReceivedWindow whole(ShuffleData header) {
    return new ReceivedWindow(header, List.of());
  }
}
