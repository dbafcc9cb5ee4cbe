package io.gpudirect.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Random;
import java.util.zip.Checksum;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/**
 * A partition received in several windows is checked from its pieces' checksums: combining them
 * must give the checksum of the whole, for every split (at 0, inside, at the end; pieces longer
 * than Adler-32's modulus), as the JDK computes it over the bytes in one go.
 */
class ChecksumAlgorithmTest {
  @ParameterizedTest
  @EnumSource(ChecksumAlgorithm.class)
  void piecesCombineToTheChecksumOfTheWhole(ChecksumAlgorithm a) {
    Random random = new Random(a.ordinal());
    for (int round = 0; round < 200; round++) {
      byte[] bytes = new byte[random.nextInt(4) == 0 ? 200_000 + random.nextInt(100_000) : random.nextInt(300)];
      random.nextBytes(bytes);
      int cut = bytes.length == 0 ? 0 : random.nextInt(bytes.length + 1);
      int whole = of(a, bytes, 0, bytes.length);
      int combined = a.combine(of(a, bytes, 0, cut), of(a, bytes, cut, bytes.length - cut), bytes.length - cut);
      assertEquals(whole, combined, a + " of " + bytes.length + " bytes cut at " + cut);
    }
  }

  @Test
  void sparksNamesAreKnownAndOthersAreNot() {
    assertEquals(ChecksumAlgorithm.ADLER32, ChecksumAlgorithm.ofSparkName("ADLER32"));
    assertEquals(ChecksumAlgorithm.CRC32, ChecksumAlgorithm.ofSparkName("crc32"));
    assertEquals(ChecksumAlgorithm.CRC32C, ChecksumAlgorithm.ofSparkName("CRC32C"));
    assertNull(ChecksumAlgorithm.ofSparkName("MD5"));
  }

  private static int of(ChecksumAlgorithm a, byte[] b, int off, int len) {
    Checksum c = a.create();
    c.update(b, off, len);
    return (int) c.getValue();
  }
}
