package io.gpudirect.server;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * CRC32C of file ranges, computed on a pool of the server's cores while the connection's own
 * thread sends the same range with sendfile. The range is read through a read-only mapping:
 * the page cache in place, with no copy into user space.
 */
final class Checksums {
  private static final Logger LOG = LoggerFactory.getLogger(Checksums.class);
  private static final ExecutorService POOL = Executors.newFixedThreadPool(
      Math.max(2, Runtime.getRuntime().availableProcessors()), r -> {
        Thread t = new Thread(r, "gpudirect-server-checksum");
        t.setDaemon(true);
        return t;
      });

  private Checksums() {}

  /**
   * Ranges up to this size are checksummed on the caller's thread from a pread into a small
   * per-thread buffer: hardware CRC32C does 64 KiB in a few microseconds, while mapping and
   * unmapping (a TLB shootdown across the process's cores) plus the hand-off to the pool took
   * the p50 of a 4 KiB read from 90 to 200 us (docs/benchmarks.md). The payload itself still
   * goes out with sendfile; this copy only feeds the checksum.
   */
  static final int INLINE_BYTES = 64 * 1024;
  private static final ThreadLocal<ByteBuffer> SMALL = ThreadLocal.withInitial(
      () -> ByteBuffer.allocateDirect(INLINE_BYTES));

  /**
   * Checksums the range: at once for a range of at most {@link #INLINE_BYTES}, else mapped now
   * (while the channel is open) and checksummed on the pool.
   */
  static Future<Integer> of(FileChannel fc, long offset, int length) throws IOException {
    if (length <= INLINE_BYTES) {
      ByteBuffer buf = SMALL.get().clear().limit(length);
      while (buf.hasRemaining()) {
        if (fc.read(buf, offset + buf.position()) < 0) {
          // Shrunk under us: the same failure a mapped range reports through await.
          return CompletableFuture.failedFuture(new IOException("File ended at offset "
              + (offset + buf.position()) + " while checksumming " + length + " bytes"));
        }
      }
      CRC32C c = new CRC32C();
      c.update(buf.flip());
      return CompletableFuture.completedFuture((int) c.getValue());
    }
    MappedByteBuffer mapped = fc.map(FileChannel.MapMode.READ_ONLY, offset, length);
    return POOL.submit(() -> {
      try {
        CRC32C c = new CRC32C();
        c.update(mapped);
        return (int) c.getValue();
      } finally {
        unmap(mapped);
      }
    });
  }

  /**
   * Unmaps now rather than when the buffer is collected: under load, ranges are mapped far
   * faster than the GC frees them (BlockServerLoadTest saw 10 GB of live mappings within 15 s
   * on a 2 GB heap), and each is a kernel mapping counted against {@code vm.max_map_count}
   * (65530 by default), past which every further map fails. Nothing else holds the buffer:
   * sendfile reads the file through the channel.
   */
  private static void unmap(MappedByteBuffer mapped) {
    if (INVOKE_CLEANER != null) {
      try {
        INVOKE_CLEANER.invokeExact((ByteBuffer) mapped);
      } catch (Throwable e) {
        LOG.debug("Cannot unmap a checksummed range; it is freed when collected", e);
      }
    }
  }

  /** {@code sun.misc.Unsafe.invokeCleaner(ByteBuffer)} (module jdk.unsupported), or null. */
  private static final MethodHandle INVOKE_CLEANER = invokeCleaner();

  private static MethodHandle invokeCleaner() {
    try {
      Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
      java.lang.reflect.Field f = unsafeClass.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      return MethodHandles.lookup()
          .findVirtual(unsafeClass, "invokeCleaner", MethodType.methodType(void.class, ByteBuffer.class))
          .bindTo(f.get(null));
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.warn("Mapped ranges are freed only when collected: {}", e.toString());
      return null;
    }
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
