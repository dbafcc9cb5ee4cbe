package io.gpudirect.arrow;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.luben.zstd.Zstd;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.apache.arrow.flatbuf.CompressionType;
import org.apache.commons.compress.compressors.lz4.FramedLZ4CompressorOutputStream;
import org.junit.jupiter.api.Test;

/** One compressed IPC buffer: the length prefix is hostile input, and the frame must match it exactly. */
class BufferDecompressionTest {
  private static final byte[] VALUES = new byte[1000];

  static {
    for (int i = 0; i < VALUES.length; i++) {
      VALUES[i] = (byte) (i % 7);
    }
  }

  @Test
  void bothCodecsRoundTripWhatTheReferenceLibrariesWrite() throws IOException {
    for (byte codec : new byte[] {CompressionType.LZ4_FRAME, CompressionType.ZSTD}) {
      ByteBuffer stored = stored(VALUES.length, frame(codec, VALUES));
      byte[] out = new byte[VALUES.length + 5];
      assertEquals(VALUES.length, BufferDecompression.decompress(codec, stored, VALUES.length, out, 5, "b", "f"));
      assertArrayEquals(VALUES, Arrays.copyOfRange(out, 5, out.length));
    }
  }

  @Test
  void aBufferStoredRawIsCopied() {
    ByteBuffer stored = stored(-1, new byte[] {1, 2, 3});
    assertEquals(3, BufferDecompression.declaredLength(stored, 0, "b", "f"));
    byte[] out = new byte[3];
    BufferDecompression.decompress(CompressionType.ZSTD, stored, 3, out, 0, "b", "f");
    assertArrayEquals(new byte[] {1, 2, 3}, out);
  }

  @Test
  void lyingPrefixesAreRefusedBeforeAllocating() {
    for (long lie : new long[] {-2, Long.MIN_VALUE, 1001, Long.MAX_VALUE, 1L << 40}) {
      ArrowFormatException e = assertThrows(ArrowFormatException.class,
          () -> BufferDecompression.declaredLength(stored(lie, new byte[16]), 1000, "buffer 3", "file.arrow"));
      assertTrue(e.getMessage().contains("file.arrow") && e.getMessage().contains("buffer 3 claims " + lie),
          e.getMessage());
    }
    ArrowFormatException e = assertThrows(ArrowFormatException.class,
        () -> BufferDecompression.declaredLength(ByteBuffer.wrap(new byte[5]), 1000, "buffer 3", "file.arrow"));
    assertTrue(e.getMessage().contains("too short for its 8-byte length prefix"), e.getMessage());
  }

  @Test
  void aFrameThatExpandsToOtherThanItsPrefixIsRefused() throws IOException {
    for (byte codec : new byte[] {CompressionType.LZ4_FRAME, CompressionType.ZSTD}) {
      for (int declared : new int[] {VALUES.length - 1, VALUES.length + 1}) {
        ByteBuffer stored = stored(declared, frame(codec, VALUES));
        ArrowFormatException e = assertThrows(ArrowFormatException.class,
            () -> BufferDecompression.decompress(codec, stored, 2000, new byte[declared], 0, "b", "f"));
        assertTrue(e.getMessage().contains("its prefix declares") || e.getMessage().contains("not a valid"),
            codec + " declared " + declared + ": " + e.getMessage());
      }
    }
  }

  @Test
  void anUnknownCodecIsNamed() {
    ArrowFormatException e = assertThrows(ArrowFormatException.class,
        () -> BufferDecompression.checkCodec((byte) 9, "record batch 0", "f"));
    assertTrue(e.getMessage().contains("codec 9"), e.getMessage());
  }

  private static byte[] frame(byte codec, byte[] values) throws IOException {
    if (codec == CompressionType.ZSTD) {
      return Zstd.compress(values);
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (FramedLZ4CompressorOutputStream lz4 = new FramedLZ4CompressorOutputStream(out)) {
      lz4.write(values);
    }
    return out.toByteArray();
  }

  private static ByteBuffer stored(long prefix, byte[] frame) {
    ByteBuffer b = ByteBuffer.allocate(8 + frame.length).order(ByteOrder.LITTLE_ENDIAN);
    b.putLong(prefix).put(frame).flip();
    return b;
  }
}
