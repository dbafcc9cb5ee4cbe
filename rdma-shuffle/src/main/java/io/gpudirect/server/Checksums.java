package io.gpudirect.server;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.zip.CRC32C;

/**
 * CRC32C of large file ranges, computed on a pool of the server's cores while the connection's
 * own thread sends the same range with sendfile. The range
 * is read from the page cache in slices of {@link #SLICE_BYTES} into one small direct buffer
 * per thread, which stays in the core's cache for the checksum; the payload itself never
 * passes through user space.
 *
 * <p>Why not a read-only mapping (which this class used before): every range then cost an
 * {@code mmap}, page faults on first touch and an {@code munmap} whose TLB shootdown interrupts
 * every core running the process. On the 2-core build VM that made each 1 MiB chunk cost about
 * 0.9 ms of server CPU, and the mappings had to be unmapped by hand so as not to pile up
 * (docs/benchmarks.md, "Profile").
 */
final class Checksums {
  /** Slice size: small enough to stay in the core's cache between the read and the CRC. */
  static final int SLICE_BYTES = 64 * 1024;
  private static final ExecutorService POOL = Executors.newFixedThreadPool(
      Math.max(2, Runtime.getRuntime().availableProcessors()), r -> {
        Thread t = new Thread(r, "gpudirect-server-checksum");
        t.setDaemon(true);
        return t;
      });
  private static final ThreadLocal<ByteBuffer> SLICE = ThreadLocal.withInitial(
      () -> ByteBuffer.allocateDirect(SLICE_BYTES));

  private Checksums() {}

  /**
   * Checksums {@code length} bytes of {@code fc} from {@code offset} on the pool; the channel
   * must stay open until the result is in. Only large ranges come here: a small one is read
   * into memory and checksummed there by the connection itself (ServerConnection.sendSmall).
   */
  static Future<Integer> of(FileChannel fc, long offset, int length) {
    return POOL.submit(() -> crc(fc, offset, length));
  }

  private static int crc(FileChannel fc, long offset, int length) throws IOException {
    ByteBuffer buf = SLICE.get();
    CRC32C c = new CRC32C();
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

  static int await(Future<Integer> checksum, Path file) throws IOException {
    try {
      return checksum.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("Interrupted while checksumming " + file, e);
    } catch (ExecutionException e) {
      // A file truncated under the checksum's reads fails here, not in the sender.
      throw new IOException("Cannot checksum " + file + ": " + e.getCause(), e.getCause());
    }
  }
}
