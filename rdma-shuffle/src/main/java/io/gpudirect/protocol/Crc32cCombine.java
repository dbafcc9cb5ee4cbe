package io.gpudirect.protocol;

/**
 * The CRC32C of a concatenation from the CRC32C of its parts: {@code crc(A ‖ B)} from
 * {@code crc(A)}, {@code crc(B)} and the length of B, without the bytes. This is what lets the
 * server keep one checksum per block of a file and answer any range from them, and a client
 * check a read that arrived in several answers with one pass over the bytes.
 *
 * <p>The arithmetic is that of zlib's {@code crc32_combine} (polynomials over GF(2), bit-reflected
 * as the CRC is), with the Castagnoli polynomial: appending {@code n} bytes to A multiplies its
 * CRC by x<sup>8n</sup> modulo the polynomial, and the pre- and post-conditioning of the two CRCs
 * cancel out, so the standard CRC values combine as they are. The same with zlib's polynomial
 * ({@link #CRC32}) combines the CRC32 checksums Spark's shuffle writer may keep per partition.
 */
public final class Crc32cCombine {
  /** CRC32 (zlib's, java.util.zip.CRC32's), for Spark's shuffle checksums of that name. */
  public static final Crc32cCombine CRC32 = new Crc32cCombine(0xEDB88320);
  /** CRC32C (Castagnoli), the protocol's own. */
  public static final Crc32cCombine CRC32C = new Crc32cCombine(0x82F63B78);

  /** The polynomial, bit-reflected. */
  private final int poly;
  /**
   * x^(2^k) modulo the polynomial, for every k that 8n can need (n a non-negative long): x^(8n)
   * is the product of those whose bit is set in 8n. (zlib keeps 32 and wraps k, relying on a
   * period of its own polynomial; a full table relies on nothing.)
   */
  private final int[] x2n = new int[67];

  private Crc32cCombine(int poly) {
    this.poly = poly;
    int p = 1 << 30; // x^1 in reflected form
    x2n[0] = p;
    for (int k = 1; k < x2n.length; k++) {
      p = times(p, p);
      x2n[k] = p;
    }
  }

  /** crc(A ‖ B), given crc(A), crc(B) and B's length in bytes (CRC32C). */
  public static int combine(int crcA, int crcB, long lengthB) {
    return CRC32C.append(crcA, crcB, lengthB);
  }

  /** crc(A ‖ B), given crc(A), crc(B) and B's length in bytes, with this polynomial. */
  public int append(int crcA, int crcB, long lengthB) {
    return times(shiftOf(lengthB), crcA) ^ crcB;
  }

  /**
   * x^(8n) modulo the polynomial: the factor that appends {@code n} bytes. Computing it once
   * per block size makes each later combine of that size a single {@link #combineShifted}.
   */
  public static int shift(long n) {
    return CRC32C.shiftOf(n);
  }

  private int shiftOf(long n) {
    if (n < 0) {
      throw new IllegalArgumentException("negative length " + n);
    }
    int p = 1 << 31; // x^0
    int k = 3; // 8n = n * 2^3
    while (n != 0) {
      if ((n & 1) != 0) {
        p = times(x2n[k], p);
      }
      n >>>= 1;
      k++;
    }
    return p;
  }

  /** crc(A ‖ B) where {@code shiftB} is {@link #shift}(length of B). */
  public static int combineShifted(int crcA, int crcB, int shiftB) {
    return CRC32C.times(shiftB, crcA) ^ crcB;
  }

  /** a * b modulo the polynomial, both bit-reflected. */
  private int times(int a, int b) {
    if (a == 0) {
      return 0;
    }
    int m = 1 << 31;
    int p = 0;
    while (true) {
      if ((a & m) != 0) {
        p ^= b;
        if ((a & (m - 1)) == 0) {
          break;
        }
      }
      m >>>= 1;
      b = (b & 1) != 0 ? (b >>> 1) ^ poly : b >>> 1;
    }
    return p;
  }
}
