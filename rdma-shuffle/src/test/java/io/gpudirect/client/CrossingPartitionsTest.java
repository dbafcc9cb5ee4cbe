package io.gpudirect.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.ChecksumAlgorithm;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.transport.PartitionChecksumMismatchException;
import io.gpudirect.transport.PartitionPiece;
import java.util.List;
import java.util.Random;
import java.util.zip.Checksum;
import org.junit.jupiter.api.Test;

/**
 * A partition across windows is checked from its pieces, whatever order the windows came in: the
 * right bytes pass, a flipped one names the partition, and pieces that do not cover it (a window
 * answered without Spark's checksums) fail as a map output changed while read, never pass.
 */
class CrossingPartitionsTest {
  private static final ShuffleBlockId BLOCK = new ShuffleBlockId(3, 4, 0, 9);

  @Test
  void piecesInAnyOrderMakeThePartitionsChecksum() {
    byte[] bytes = new byte[200_000];
    new Random(1).nextBytes(bytes);
    int expected = of(bytes, 0, bytes.length);
    CrossingPartitions good = new CrossingPartitions(BLOCK, "h:1");
    good.add(List.of(piece(bytes, expected, 150_000, 50_000)));
    good.add(List.of(piece(bytes, expected, 0, 65_536)));
    good.add(List.of(piece(bytes, expected, 65_536, 150_000 - 65_536)));
    good.check();

    bytes[70_000] ^= 1;
    CrossingPartitions flipped = new CrossingPartitions(BLOCK, "h:1");
    flipped.add(List.of(piece(bytes, expected, 0, 65_536), piece(bytes, expected, 65_536, 200_000 - 65_536)));
    PartitionChecksumMismatchException e = assertThrows(PartitionChecksumMismatchException.class, flipped::check);
    assertTrue(e.getMessage().contains("ADLER32 checksum of shuffle 3, map 4, reduce 7 (200000 bytes"), e.getMessage());

    CrossingPartitions uncovered = new CrossingPartitions(BLOCK, "h:1");
    uncovered.add(List.of(piece(bytes, expected, 0, 65_536)));
    RemoteFileException changed = assertThrows(RemoteFileException.class, uncovered::check);
    assertEquals(ErrorCode.FILE_CHANGED, changed.code());
    assertTrue(changed.getMessage().contains("reduce partition 7"), changed.getMessage());
  }

  private static PartitionPiece piece(byte[] partition, int expected, int offset, int length) {
    return new PartitionPiece(ChecksumAlgorithm.ADLER32, 7, 1000, partition.length, expected, offset, length,
        of(partition, offset, length));
  }

  private static int of(byte[] b, int off, int len) {
    Checksum c = ChecksumAlgorithm.ADLER32.create();
    c.update(b, off, len);
    return (int) c.getValue();
  }
}
