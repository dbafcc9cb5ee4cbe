package io.gpudirect.arrow;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.compression.CompressionCodec;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.compression.NoCompressionCodec;

/**
 * The codecs Arrow Java's readers decompress IPC bodies with on the host path: LZ4_FRAME and
 * ZSTD through {@link BufferDecompression}, where a buffer's declared uncompressed length
 * must fit the file's allocator before anything is allocated. (Arrow's loader then validates
 * the decompressed buffers against the row counts, as for any batch.) Read-only: compressing
 * is not this reader's job.
 */
final class BoundedCodecs implements CompressionCodec.Factory {
  private final String displayName;
  /**
   * What decompression made during the load in progress. Arrow's loader drops the buffers it
   * already decompressed for a field when a later buffer of that field fails, so after a failed
   * load the reader clears its vectors and {@link #releaseUntaken} frees what is left.
   */
  private final List<ArrowBuf> made = new ArrayList<>();

  BoundedCodecs(String displayName) {
    this.displayName = displayName;
  }

  /** Forgets the buffers of the previous load; call before each load. */
  void startLoad() {
    made.clear();
  }

  /** After a failed load whose vectors were cleared: frees the decompressed buffers no vector holds. */
  void releaseUntaken() {
    for (ArrowBuf b : made) {
      while (b.refCnt() > 0) {
        b.close();
      }
    }
    made.clear();
  }

  @Override
  public CompressionCodec createCodec(CompressionUtil.CodecType type) {
    switch (type) {
      case NO_COMPRESSION:
        return NoCompressionCodec.INSTANCE;
      case LZ4_FRAME:
      case ZSTD:
        return new Bounded(type);
      default:
        throw new ArrowFormatException(displayName, "it is compressed with " + type
            + "; only LZ4_FRAME and ZSTD exist in Arrow IPC");
    }
  }

  /** Arrow 18's second factory method (Arrow 12 lacks it, hence no {@code @Override}). */
  public CompressionCodec createCodec(CompressionUtil.CodecType type, int level) {
    return createCodec(type);
  }

  private final class Bounded implements CompressionCodec {
    private final CompressionUtil.CodecType type;

    Bounded(CompressionUtil.CodecType type) {
      this.type = type;
    }

    /**
     * Takes over {@code compressed} when it returns (as Arrow's codecs do: the loader retains
     * it again after a successful call); on failure the loader still owns it.
     */
    @Override
    public ArrowBuf decompress(BufferAllocator allocator, ArrowBuf compressed) {
      long stored = compressed.writerIndex();
      if (stored > BufferDecompression.MAX_BUFFER) {
        throw new ArrowFormatException(displayName, "a " + stored + "-byte compressed buffer is larger than "
            + BufferDecompression.MAX_BUFFER + " bytes, which this reader cannot hold");
      }
      ByteBuffer in = compressed.nioBuffer(0, (int) stored);
      long declared = BufferDecompression.declaredLength(in, allocator.getHeadroom(), "a buffer", displayName);
      ArrowBuf result;
      if (declared == 0) {
        result = allocator.getEmpty();
      } else {
        byte[] out = new byte[(int) declared];
        BufferDecompression.decompress(type.getType(), in, allocator.getHeadroom(), out, 0, "a buffer", displayName);
        result = allocator.buffer(declared);
        result.setBytes(0, out);
        result.writerIndex(declared);
        made.add(result);
      }
      compressed.close();
      return result;
    }

    @Override
    public ArrowBuf compress(BufferAllocator allocator, ArrowBuf uncompressed) {
      throw new UnsupportedOperationException("the gpudirect reader does not write Arrow IPC");
    }

    @Override
    public CompressionUtil.CodecType getCodecType() {
      return type;
    }
  }
}
