package io.gpudirect.server;

import io.gpudirect.protocol.Crc32cCombine;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.zip.CRC32C;

/**
 * CRC32C of file ranges from checksums kept per {@value #BLOCK_BYTES}-byte block of each file,
 * so that a file read again (the next epoch, the next query) costs the server no second pass
 * over its bytes: a range's CRC is its cached whole blocks combined ({@link Crc32cCombine})
 * with the two partial blocks at its ends, which are read. HDFS keeps block checksums for the
 * same reason, in files beside the blocks; here they live in memory and are made on first read.
 *
 * <p>A block's checksum is used only for the same version of the same file: the caller gives
 * the file's identity, size, modification and change times from a stat made for this request,
 * after opening it, so a rewritten or replaced file starts afresh, also one whose writer put
 * the modification time back. A file modified within the last {@link #SETTLE_NANOS} is not
 * cached at all: file-system timestamps are coarser than writes (a few milliseconds on Linux),
 * so a file still being written could change without its times changing (git's "racy" rule,
 * for the same reason). Even then a stale checksum could only make the client refuse the
 * bytes, never accept wrong ones.
 *
 * <p>Bounded: at most {@code maxBlocks} checksums in all (8 bytes each), whole files evicted
 * least recently used first; a file larger than the bound is checksummed without caching.
 * Thread-safe: connections share one instance; two threads computing the same block store the
 * same value.
 */
final class BlockChecksums {
  static final int BLOCK_BYTES = 64 * 1024;
  static final long SETTLE_NANOS = 2_000_000_000L;
  private static final int BLOCK_SHIFT = Crc32cCombine.shift(BLOCK_BYTES);

  /**
   * A file as one stat saw it. {@code key} is the file system's identity (device and inode);
   * {@code changedNanos} its change time, which a writer cannot put back as it can the
   * modification time ({@link FileVersions}), or {@code FileVersion.CHANGE_TIME_UNKNOWN}.
   */
  record Version(Object key, long size, long modifiedNanos, long changedNanos) {}

  private final long maxBlocks;
  private final LinkedHashMap<Object, FileBlocks> files = new LinkedHashMap<>(16, 0.75f, true);
  private long blocksHeld;
  private final LongAdder hits = new LongAdder();
  private final LongAdder misses = new LongAdder();

  BlockChecksums(long maxBlocks) {
    this.maxBlocks = maxBlocks;
  }

  /** One file version's block checksums: 0 where not yet known, else 1 << 32 | crc. */
  private record FileBlocks(Version version, AtomicLongArray crcs) {}

  /**
   * CRC32C of {@code length} bytes of {@code fc} from {@code offset}; {@code version} is the
   * file behind {@code fc}, or null to compute without the cache. What is not cached is read
   * through {@code slice}, a direct buffer of {@link #BLOCK_BYTES} the caller holds meanwhile.
   */
  int crc(FileChannel fc, Version version, long offset, int length, ByteBuffer slice) throws IOException {
    long end = offset + length;
    long firstBlock = (offset + BLOCK_BYTES - 1) / BLOCK_BYTES;
    long endBlock = end / BLOCK_BYTES;
    FileBlocks blocks = firstBlock < endBlock ? blocksOf(version) : null;
    if (blocks == null) {
      return read(fc, offset, length, new CRC32C(), slice);
    }
    long headEnd = firstBlock * BLOCK_BYTES;
    long tailStart = endBlock * BLOCK_BYTES;
    int crc = read(fc, offset, (int) (headEnd - offset), new CRC32C(), slice);
    for (long b = firstBlock; b < endBlock; b++) {
      crc = Crc32cCombine.combineShifted(crc, block(fc, blocks, (int) b, slice), BLOCK_SHIFT);
    }
    if (end > tailStart) {
      crc = Crc32cCombine.combine(crc, read(fc, tailStart, (int) (end - tailStart), new CRC32C(), slice),
          end - tailStart);
    }
    return crc;
  }

  /**
   * As {@link #crc}, only when every whole block of the range is cached already; null, having
   * read nothing, when one is not (or the range has no whole block, or its file is not cached).
   * Then the answer is a few combines and the reads of the partial blocks at its two ends
   * (through {@code slice}, any direct buffer; into {@code scratch}): little enough for a
   * connection's own thread, which is spared handing the range to the pool and waiting for it
   * (a wake-up of a pool thread and of the connection's, per answer).
   */
  Integer crcIfCached(FileChannel fc, Version version, long offset, int length, ByteBuffer slice,
      CRC32C scratch) throws IOException {
    long end = offset + length;
    long firstBlock = (offset + BLOCK_BYTES - 1) / BLOCK_BYTES;
    long endBlock = end / BLOCK_BYTES;
    FileBlocks blocks = firstBlock < endBlock ? blocksOf(version) : null;
    if (blocks == null) {
      return null;
    }
    int whole = 0;
    for (long b = firstBlock; b < endBlock; b++) {
      long known = blocks.crcs.get((int) b);
      if (known == 0) {
        return null;
      }
      whole = b == firstBlock ? (int) known : Crc32cCombine.combineShifted(whole, (int) known, BLOCK_SHIFT);
    }
    hits.add(endBlock - firstBlock);
    long headEnd = firstBlock * BLOCK_BYTES;
    long tailStart = endBlock * BLOCK_BYTES;
    scratch.reset();
    int crc = read(fc, offset, (int) (headEnd - offset), scratch, slice);
    crc = Crc32cCombine.combine(crc, whole, tailStart - headEnd);
    if (end > tailStart) {
      scratch.reset();
      crc = Crc32cCombine.combine(crc, read(fc, tailStart, (int) (end - tailStart), scratch, slice),
          end - tailStart);
    }
    return crc;
  }

  private int block(FileChannel fc, FileBlocks blocks, int b, ByteBuffer slice) throws IOException {
    long known = blocks.crcs.get(b);
    if (known != 0) {
      hits.increment();
      return (int) known;
    }
    int crc = read(fc, (long) b * BLOCK_BYTES, BLOCK_BYTES, new CRC32C(), slice);
    blocks.crcs.set(b, 1L << 32 | (crc & 0xFFFF_FFFFL));
    misses.increment();
    return crc;
  }

  private synchronized FileBlocks blocksOf(Version v) {
    if (v == null || v.key() == null || System.currentTimeMillis() * 1_000_000L - v.modifiedNanos() < SETTLE_NANOS) {
      return null;
    }
    long count = (v.size() + BLOCK_BYTES - 1) / BLOCK_BYTES;
    if (count > maxBlocks) {
      return null;
    }
    FileBlocks f = files.get(v.key());
    if (f != null && f.version.equals(v)) {
      return f;
    }
    if (f != null) {
      files.remove(v.key());
      blocksHeld -= f.crcs.length();
    }
    for (Iterator<Map.Entry<Object, FileBlocks>> it = files.entrySet().iterator();
        blocksHeld + count > maxBlocks && it.hasNext(); ) {
      blocksHeld -= it.next().getValue().crcs.length();
      it.remove();
    }
    f = new FileBlocks(v, new AtomicLongArray((int) count));
    files.put(v.key(), f);
    blocksHeld += count;
    return f;
  }

  /** Block checksums found in the cache so far. */
  long hits() {
    return hits.sum();
  }

  /** Block checksums computed (read from the file) for the cache so far. */
  long misses() {
    return misses.sum();
  }

  synchronized long blocksHeld() {
    return blocksHeld;
  }

  /**
   * The range read from the page cache in block-sized slices into one small buffer ({@code buf},
   * the caller's: Checksums lends one to each task), which stays in the core's cache for the
   * checksum.
   *
   * <p>Why not a read-only mapping (which the server used before): every range then cost an
   * {@code mmap}, page faults on first touch and an {@code munmap} whose TLB shootdown
   * interrupts every core running the process. On the 2-core build VM that made each 1 MiB
   * chunk cost about 0.9 ms of server CPU (docs/benchmarks.md, "Profile").
   */
  static int read(FileChannel fc, long offset, int length, CRC32C c, ByteBuffer buf) throws IOException {
    long pos = offset;
    long end = offset + length;
    while (pos < end) {
      buf.clear().limit((int) Math.min(buf.capacity(), end - pos));
      while (buf.hasRemaining()) {
        if (fc.read(buf, pos + buf.position()) < 0) {
          // Shrunk under us: the connection closes, as when sendfile finds the file short.
          throw new IOException("File ended at offset " + (pos + buf.position())
              + " while checksumming " + length + " bytes from offset " + offset);
        }
      }
      c.update(buf.flip());
      pos += buf.limit();
    }
    return (int) c.getValue();
  }
}
