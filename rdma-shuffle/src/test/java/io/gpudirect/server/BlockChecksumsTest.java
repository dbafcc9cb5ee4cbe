package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.Crc32cCombine;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BlockChecksumsTest {
  /** What Checksums lends each of its tasks to read through. */
  private static final ByteBuffer SLICE = ByteBuffer.allocateDirect(BlockChecksums.BLOCK_BYTES);

  @TempDir Path dir;

  @Property(tries = 2000, seed = "7")
  void combiningTwoChecksumsGivesTheChecksumOfTheConcatenation(
      @ForAll @Size(max = 300) byte[] a, @ForAll @Size(max = 300) byte[] b) {
    byte[] ab = new byte[a.length + b.length];
    System.arraycopy(a, 0, ab, 0, a.length);
    System.arraycopy(b, 0, ab, a.length, b.length);
    assertEquals(crc(ab, 0, ab.length), Crc32cCombine.combine(crc(a, 0, a.length), crc(b, 0, b.length), b.length));
  }

  @Property(tries = 50, seed = "11")
  void combiningWorksForLongSecondParts(@ForAll @IntRange(min = 0, max = 3 << 20) int split) {
    byte[] data = random(3 << 20, 5);
    assertEquals(crc(data, 0, data.length),
        Crc32cCombine.combine(crc(data, 0, split), crc(data, split, data.length - split), data.length - split));
  }

  @Test
  void everyRangeIsCheckedAgainstTheBytesAndRepeatedRangesComeFromTheCache() throws IOException {
    byte[] data = random(5 * BlockChecksums.BLOCK_BYTES + 1234, 1);
    Path file = settled(dir.resolve("f"), data);
    BlockChecksums sums = new BlockChecksums(1 << 20);
    Random r = new Random(3);
    long[][] ranges = new long[300][];
    for (int i = 0; i < ranges.length; i++) {
      int off = r.nextInt(data.length);
      ranges[i] = new long[] {off, r.nextInt(data.length - off + 1)};
    }
    try (FileChannel fc = FileChannel.open(file)) {
      for (long[] range : ranges) {
        assertEquals(crc(data, (int) range[0], (int) range[1]),
            sums.crc(fc, version(file), range[0], (int) range[1], SLICE), "range " + range[0] + "+" + range[1]);
      }
      long computed = sums.misses();
      assertTrue(computed > 0 && computed <= 5, "each whole block is read once for the cache, not " + computed);
      long hits = sums.hits();
      for (long[] range : ranges) {
        assertEquals(crc(data, (int) range[0], (int) range[1]),
            sums.crc(fc, version(file), range[0], (int) range[1], SLICE));
      }
      assertEquals(computed, sums.misses(), "a second pass reads no whole block again");
      assertTrue(sums.hits() > hits);
    }
  }

  @Test
  void aRangeIsAnsweredFromTheCacheAloneOnlyOnceAllItsWholeBlocksAreThere() throws IOException {
    byte[] data = random(6 * BlockChecksums.BLOCK_BYTES + 4321, 4);
    Path file = settled(dir.resolve("f"), data);
    BlockChecksums sums = new BlockChecksums(1 << 20);
    CRC32C scratch = new CRC32C();
    try (FileChannel fc = FileChannel.open(file)) {
      int block = BlockChecksums.BLOCK_BYTES;
      assertNull(sums.crcIfCached(fc, version(file), 100, 3 * block, SLICE, scratch), "nothing cached yet");
      sums.crc(fc, version(file), block, 2 * block, SLICE);
      assertNull(sums.crcIfCached(fc, version(file), 100, 4 * block, SLICE, scratch),
          "blocks 1 and 2 are cached, not block 3");
      assertEquals(crc(data, block, 2 * block), sums.crcIfCached(fc, version(file), block, 2 * block, SLICE, scratch));
      sums.crc(fc, version(file), 0, data.length, SLICE);
      Random r = new Random(5);
      for (int i = 0; i < 300; i++) {
        int off = r.nextInt(data.length);
        int len = r.nextInt(data.length - off + 1);
        Integer got = sums.crcIfCached(fc, version(file), off, len, SLICE, scratch);
        boolean wholeBlock = (off + block - 1) / block < (off + len) / block;
        if (wholeBlock) {
          assertEquals(crc(data, off, len), got, "range " + off + "+" + len);
        } else {
          assertNull(got, "a range without a whole block is left to crc(): range " + off + "+" + len);
        }
      }
    }
  }

  @Test
  void aRewrittenFileIsCheckedAfreshEvenAtTheSameSize() throws IOException {
    Path file = dir.resolve("f");
    byte[] before = random(4 * BlockChecksums.BLOCK_BYTES, 1);
    byte[] after = random(4 * BlockChecksums.BLOCK_BYTES, 2);
    BlockChecksums sums = new BlockChecksums(1 << 20);
    settled(file, before);
    try (FileChannel fc = FileChannel.open(file)) {
      assertEquals(crc(before, 0, before.length), sums.crc(fc, version(file), 0, before.length, SLICE));
    }
    Files.write(file, after);
    Files.setLastModifiedTime(file, FileTime.from(Instant.now().minusSeconds(30)));
    try (FileChannel fc = FileChannel.open(file)) {
      assertEquals(crc(after, 0, after.length), sums.crc(fc, version(file), 0, after.length, SLICE));
    }
  }

  @Test
  void aFileModifiedMomentsAgoIsNotCached() throws IOException {
    byte[] data = random(4 * BlockChecksums.BLOCK_BYTES, 1);
    Path file = Files.write(dir.resolve("fresh"), data);
    BlockChecksums sums = new BlockChecksums(1 << 20);
    try (FileChannel fc = FileChannel.open(file)) {
      for (int i = 0; i < 2; i++) {
        assertEquals(crc(data, 0, data.length), sums.crc(fc, version(file), 0, data.length, SLICE));
      }
    }
    assertEquals(0, sums.blocksHeld());
    assertEquals(0, sums.hits());
  }

  @Test
  void theCacheStaysWithinItsBoundAndStillAnswersRightBeyondIt() throws IOException {
    BlockChecksums sums = new BlockChecksums(10);
    for (int i = 0; i < 6; i++) {
      byte[] data = random((3 + i % 2) * BlockChecksums.BLOCK_BYTES, i);
      Path file = settled(dir.resolve("f" + i), data);
      try (FileChannel fc = FileChannel.open(file)) {
        assertEquals(crc(data, 100, data.length - 200),
            sums.crc(fc, version(file), 100, data.length - 200, SLICE));
      }
      assertTrue(sums.blocksHeld() <= 10, "held " + sums.blocksHeld());
    }
    byte[] big = random(11 * BlockChecksums.BLOCK_BYTES, 9);
    Path file = settled(dir.resolve("big"), big);
    try (FileChannel fc = FileChannel.open(file)) {
      assertEquals(crc(big, 0, big.length), sums.crc(fc, version(file), 0, big.length, SLICE));
    }
    assertTrue(sums.blocksHeld() <= 10);
  }

  private static BlockChecksums.Version version(Path file) throws IOException {
    BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
    return new BlockChecksums.Version(a.fileKey(), a.size(), a.lastModifiedTime().to(TimeUnit.NANOSECONDS),
        FileVersions.changedNanos(a));
  }

  /** Written, then dated back past the settling time, as a file that is no longer being written. */
  private static Path settled(Path file, byte[] data) throws IOException {
    Files.write(file, data);
    Files.setLastModifiedTime(file, FileTime.from(Instant.now().minusSeconds(60)));
    return file;
  }

  private static byte[] random(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static int crc(byte[] b, int off, int len) {
    CRC32C c = new CRC32C();
    c.update(b, off, len);
    return (int) c.getValue();
  }
}
