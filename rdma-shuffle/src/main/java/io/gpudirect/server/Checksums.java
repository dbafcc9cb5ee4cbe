package io.gpudirect.server;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.zip.CRC32C;

/**
 * CRC32C of file ranges, computed on a pool of the server's cores while the connection's own
 * thread sends the same range with sendfile. The range is read through a read-only mapping:
 * the page cache in place, with no copy into user space.
 */
final class Checksums {
  private static final ExecutorService POOL = Executors.newFixedThreadPool(
      Math.max(2, Runtime.getRuntime().availableProcessors()), r -> {
        Thread t = new Thread(r, "gpudirect-server-checksum");
        t.setDaemon(true);
        return t;
      });

  private Checksums() {}

  /** Maps the range now (while the channel is open) and checksums it on the pool. */
  static Future<Integer> of(FileChannel fc, long offset, int length) throws IOException {
    MappedByteBuffer mapped = fc.map(FileChannel.MapMode.READ_ONLY, offset, length);
    return POOL.submit(() -> {
      CRC32C c = new CRC32C();
      c.update(mapped);
      return (int) c.getValue();
    });
  }

  static int await(Future<Integer> checksum, Path file) throws IOException {
    try {
      return checksum.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("Interrupted while checksumming " + file, e);
    } catch (ExecutionException e) {
      // A file truncated under its mapping faults here (an InternalError), not in the sender.
      throw new IOException("Cannot checksum " + file + ": " + e.getCause(), e.getCause());
    }
  }
}
