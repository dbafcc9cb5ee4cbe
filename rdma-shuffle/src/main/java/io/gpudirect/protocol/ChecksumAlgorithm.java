package io.gpudirect.protocol;

import java.util.Locale;
import java.util.zip.Adler32;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import java.util.zip.Checksum;

/**
 * The checksums Spark's sort shuffle writer keeps per reduce partition
 * ({@code spark.shuffle.checksum.algorithm}: ADLER32, the default, and CRC32; Spark 4 adds
 * CRC32C), by the one-byte code {@link PartitionChecksums} carries them with. Each is 32 bits,
 * as {@link Checksum#getValue()} gives it, and each can be combined from the checksums of two
 * pieces and the second's length, so that a partition received in several windows is checked
 * with one pass over its bytes.
 */
public enum ChecksumAlgorithm {
  ADLER32(1),
  CRC32(2),
  CRC32C(3);

  /** Adler-32's modulus. */
  private static final int ADLER_BASE = 65521;

  private final int code;

  ChecksumAlgorithm(int code) {
    this.code = code;
  }

  int code() {
    return code;
  }

  /** A fresh checksum of this algorithm (the JDK's: each is intrinsified). */
  public Checksum create() {
    return switch (this) {
      case ADLER32 -> new Adler32();
      case CRC32 -> new CRC32();
      case CRC32C -> new CRC32C();
    };
  }

  /**
   * Whether a connection's reading thread can afford this checksum over its bytes as they arrive.
   * CRC32 and CRC32C run as CPU instructions in the JDK (about 55 GB/s a core on the build VM);
   * Adler-32 runs in zlib's scalar loop on JDK 17 (about 3.3 GB/s), which would bound the one
   * thread that reads a connection below the socket's rate, so its windows are checked on the
   * client's checksum pool instead, a core each.
   */
  public boolean keepsUpWithTheWire() {
    return this != ADLER32;
  }

  /** The checksum of A ‖ B from A's, B's and B's length. */
  public int combine(int a, int b, long lengthB) {
    return switch (this) {
      case CRC32 -> Crc32cCombine.CRC32.append(a, b, lengthB);
      case CRC32C -> Crc32cCombine.CRC32C.append(a, b, lengthB);
      case ADLER32 -> adlerCombine(a, b, lengthB);
    };
  }

  /**
   * zlib's {@code adler32_combine}: Adler-32 is two sums modulo 65521, s1 = 1 + the bytes and s2
   * = the sum of each prefix's s1; appending B adds B's bytes to s1 and, to s2, B's s2 plus
   * |B| times A's s1 (less the 1 that both s1 start from, counted once).
   */
  private static int adlerCombine(int a, int b, long lengthB) {
    long rem = lengthB % ADLER_BASE;
    long sum1 = a & 0xffff;
    long sum2 = (rem * sum1) % ADLER_BASE;
    sum1 += (b & 0xffff) + ADLER_BASE - 1;
    sum2 += ((a >>> 16) & 0xffff) + ((b >>> 16) & 0xffff) + ADLER_BASE - rem;
    sum1 %= ADLER_BASE;
    sum2 %= ADLER_BASE;
    return (int) (sum1 | (sum2 << 16));
  }

  /** The algorithm of Spark's name for it (the checksum file's extension); null for one not known here. */
  public static ChecksumAlgorithm ofSparkName(String name) {
    for (ChecksumAlgorithm a : values()) {
      if (a.name().equals(name.toUpperCase(Locale.ROOT))) {
        return a;
      }
    }
    return null;
  }

  static ChecksumAlgorithm ofCode(int code, String field) {
    for (ChecksumAlgorithm a : values()) {
      if (a.code == code) {
        return a;
      }
    }
    throw new ProtocolException(field + ": no checksum algorithm has code " + code);
  }
}
