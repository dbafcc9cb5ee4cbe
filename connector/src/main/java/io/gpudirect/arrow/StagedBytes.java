package io.gpudirect.arrow;

/**
 * Host bytes that go to the GPU next to a batch's body: decompressed buffers, offsets narrowed
 * from 64 to 32 bits, offsets made for fixed-size lists. Each piece starts 64-byte aligned,
 * as Arrow buffers do and cuDF's widest loads (DECIMAL128) need. One Java array, so a batch
 * stages at most about 2 GiB; past that the batch is refused by name.
 */
public final class StagedBytes {
  private static final int ALIGNMENT = 64;

  private final String displayName;
  private byte[] bytes = new byte[0];
  private int size;

  public StagedBytes(String displayName) {
    this.displayName = displayName;
  }

  /** Room for {@code length} bytes; returns where they start. */
  public int reserve(long length, String what) {
    long start = (size + ALIGNMENT - 1L) / ALIGNMENT * ALIGNMENT;
    if (length < 0 || length > BufferDecompression.MAX_BUFFER - start) {
      throw new ArrowFormatException(displayName, what + " needs " + length + " more bytes of host staging after "
          + start + ", past the " + BufferDecompression.MAX_BUFFER + " one batch may stage");
    }
    int end = (int) (start + length);
    if (end > bytes.length) {
      byte[] grown = new byte[(int) Math.min(BufferDecompression.MAX_BUFFER, Math.max(end, 2L * bytes.length))];
      System.arraycopy(bytes, 0, grown, 0, size);
      bytes = grown;
    }
    size = end;
    return (int) start;
  }

  public byte[] array() {
    return bytes;
  }

  public int size() {
    return size;
  }
}
