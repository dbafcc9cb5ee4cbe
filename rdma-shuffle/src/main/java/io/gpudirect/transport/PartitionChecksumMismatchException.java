package io.gpudirect.transport;

import io.gpudirect.protocol.ChecksumAlgorithm;
import io.gpudirect.protocol.ShuffleBlockId;

/**
 * A reduce partition of a shuffle block whose bytes do not have the checksum Spark's writer
 * computed when it wrote them: corrupted on the map output's disk, or on the way. A
 * {@link ChecksumMismatchException}, so it is retried and then fails the fetch as a CRC32C
 * mismatch does.
 */
public class PartitionChecksumMismatchException extends ChecksumMismatchException {
  public PartitionChecksumMismatchException(ShuffleBlockId block, int reduceId, long length,
      ChecksumAlgorithm algorithm, String source, int expected, int actual) {
    super(String.format("Spark's %s checksum of shuffle %d, map %d, reduce %d (%d bytes, in block %s) does"
        + " not match the bytes received %s: written %08x, received %08x; the map output is corrupt on"
        + " its disk, or was damaged on the way", algorithm, block.shuffleId(), block.mapId(), reduceId,
        length, block.name(), source, expected, actual));
  }
}
