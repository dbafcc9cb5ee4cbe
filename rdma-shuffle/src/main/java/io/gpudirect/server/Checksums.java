package io.gpudirect.server;

import io.gpudirect.DaemonThreads;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.memory.HostBufferPool;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * CRC32C of large file ranges, computed on a pool of the server's cores while the connection's
 * own thread sends the same range with sendfile ({@link BlockChecksums} reads what it has not
 * cached from the page cache; the payload itself never passes through user space). One per
 * server, from its start to its close; the pool's threads start as work comes.
 */
final class Checksums implements AutoCloseable {
  private static final int THREADS = Math.max(2, Runtime.getRuntime().availableProcessors());
  private final ExecutorService pool = Executors.newFixedThreadPool(THREADS,
      DaemonThreads.named("gpudirect-server-checksum"));
  private final LongAdder tasks = new LongAdder();
  /** The buffers the tasks read files through, one per running task, charged to the server. */
  private final HostBufferPool slices;

  Checksums(BufferAllocator memory) {
    this.slices = new HostBufferPool(memory, "checksum slice", BlockChecksums.BLOCK_BYTES, THREADS);
  }

  /**
   * Checksums {@code length} bytes of {@code fc} from {@code offset} on the pool, through the
   * server's block checksums; the channel must stay open until the result is in. Only large
   * ranges with a block not yet cached come here: a small one is read into memory and
   * checksummed there by the connection itself (ReadAnswers.sendSmall), and one whose whole
   * blocks are all cached is combined there ({@link BlockChecksums#crcIfCached}).
   */
  Future<Integer> of(BlockChecksums blocks, FileChannel fc, BlockChecksums.Version version, long offset,
      int length) {
    tasks.increment();
    return pool.submit(() -> {
      HostBuffer slice = slices.take();
      try {
        return blocks.crc(fc, version, offset, length, slice.nioBuffer());
      } finally {
        slices.give(slice);
      }
    });
  }

  /** Ranges handed to the pool so far. */
  long tasks() {
    return tasks.sum();
  }

  /**
   * After the server's connections have closed: checksums still running finish (a little
   * while is waited for them), none start; the slices go back.
   */
  @Override
  public void close() {
    pool.shutdown();
    try {
      pool.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    slices.close();
  }

  /**
   * Waits for a checksum no one will use (its payload was voided), so that the channel it
   * reads is free again; 0 if it failed.
   */
  static int awaitQuietly(Future<Integer> checksum) {
    try {
      return checksum.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 0;
    } catch (ExecutionException e) {
      return 0;
    }
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
