package io.gpudirect.arrow;

import com.github.luben.zstd.Zstd;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.arrow.flatbuf.CompressionType;
import org.apache.commons.compress.compressors.lz4.FramedLZ4CompressorInputStream;

/**
 * One buffer of a compressed Arrow IPC body (BodyCompression, BUFFER method): an int64
 * uncompressed length, then an LZ4 frame or a ZSTD frame, or the raw bytes when the length
 * is -1. The same two libraries as Arrow Java's arrow-compression (commons-compress and
 * zstd-jni, both on Spark's classpath), but the length prefix is hostile input: it is checked
 * against what the caller says the buffer may hold <em>before</em> anything is allocated, and
 * the codec must produce exactly that many bytes (Arrow's own LZ4 codec trusts the prefix for
 * its allocation and then takes whatever the frame expands to).
 */
public final class BufferDecompression {
  /** The int64 uncompressed length before each compressed buffer. */
  public static final int PREFIX = 8;
  /** The prefix that marks a buffer the writer left uncompressed. */
  public static final long NOT_COMPRESSED = -1;
  /** The most one buffer may hold here: Java arrays, as in Arrow Java's own codecs. */
  public static final long MAX_BUFFER = Integer.MAX_VALUE - 8;

  private BufferDecompression() {}

  /** Arrow's name of a codec, for messages. */
  static String codecName(byte codec) {
    return codec >= 0 && codec < CompressionType.names.length ? CompressionType.name(codec) : "codec " + codec;
  }

  /** Refuses codecs other than LZ4_FRAME and ZSTD, naming the one found. */
  public static void checkCodec(byte codec, String where, String displayName) {
    if (codec != CompressionType.LZ4_FRAME && codec != CompressionType.ZSTD) {
      throw new ArrowFormatException(displayName, where + " is compressed with " + codecName(codec)
          + "; only LZ4_FRAME and ZSTD exist in Arrow IPC");
    }
  }

  /**
   * The uncompressed length a compressed buffer declares, checked: -1 (stored raw) or a length
   * in {@code [0, max]}. A buffer of 0 bytes is empty and has no prefix.
   *
   * @param compressed the buffer as stored in the body, prefix included
   */
  public static long declaredLength(ByteBuffer compressed, long max, String what, String displayName) {
    if (compressed.remaining() == 0) {
      return 0;
    }
    if (compressed.remaining() < PREFIX) {
      throw new ArrowFormatException(displayName, what + " is a compressed buffer of " + compressed.remaining()
          + " bytes, too short for its 8-byte length prefix");
    }
    long declared = compressed.duplicate().order(ByteOrder.LITTLE_ENDIAN).getLong(compressed.position());
    if (declared == NOT_COMPRESSED) {
      return compressed.remaining() - PREFIX;
    }
    if (declared < 0 || declared > Math.min(max, MAX_BUFFER)) {
      throw new ArrowFormatException(displayName, what + " claims " + declared + " bytes uncompressed, "
          + (declared < 0 ? "a negative length" : "more than the " + Math.min(max, MAX_BUFFER) + " it may hold"));
    }
    return declared;
  }

  /**
   * Decompresses one buffer into {@code out[outOffset ..)}, which has room for
   * {@link #declaredLength} bytes (checked by the caller against the same {@code max}).
   * Returns the number of bytes written, which is always the declared length.
   */
  public static int decompress(byte codec, ByteBuffer compressed, long max, byte[] out, int outOffset, String what,
      String displayName) {
    long declared = declaredLength(compressed, max, what, displayName);
    if (compressed.remaining() == 0 || declared == 0) {
      return 0;
    }
    int length = (int) declared;
    byte[] in = new byte[compressed.remaining() - PREFIX];
    compressed.duplicate().position(compressed.position() + PREFIX).get(in);
    long raw = compressed.duplicate().order(ByteOrder.LITTLE_ENDIAN).getLong(compressed.position());
    if (raw == NOT_COMPRESSED) {
      System.arraycopy(in, 0, out, outOffset, length);
      return length;
    }
    checkCodec(codec, what, displayName);
    if (codec == CompressionType.ZSTD) {
      long n;
      try {
        n = Zstd.decompressByteArray(out, outOffset, length, in, 0, in.length);
      } catch (RuntimeException e) { // ZstdException, in the versions that throw instead of returning a code.
        throw new ArrowFormatException(displayName, what + " is not a valid ZSTD frame: " + e.getMessage(), e);
      }
      if (Zstd.isError(n)) {
        throw new ArrowFormatException(displayName, what + " is not a valid ZSTD frame: " + Zstd.getErrorName(n));
      }
      if (n != length) {
        throw new ArrowFormatException(displayName, what + " decompresses to " + n + " bytes, not the "
            + length + " its prefix declares");
      }
      return length;
    }
    try (InputStream lz4 = new FramedLZ4CompressorInputStream(new ByteArrayInputStream(in))) {
      int n = lz4.readNBytes(out, outOffset, length);
      if (n != length || lz4.read() != -1) {
        throw new ArrowFormatException(displayName, what + " decompresses to " + (n != length ? n + " bytes" : "more bytes")
            + ", not the " + length + " its prefix declares");
      }
      return length;
    } catch (IOException | RuntimeException e) {
      if (e instanceof ArrowFormatException) {
        throw (ArrowFormatException) e;
      }
      throw new ArrowFormatException(displayName, what + " is not a valid LZ4 frame: " + e.getMessage(), e);
    }
  }
}
