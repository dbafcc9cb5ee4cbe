package io.gpudirect.shuffle;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Which remote blocks are fetched to a file instead of into memory, as Spark's fetcher sends
 * them ({@code spark.network.maxRemoteBlockSizeFetchToMem}, 200m by default): a block whose
 * size, as its map status reports it, is above {@code maxInMemory}. Such a block is written to a
 * new file of {@code files} window by window as its windows arrive, each checked with CRC32C
 * first (so it holds about a chunk per stream of memory, not its length), read from the file,
 * and the file deleted when the block is closed, or at once when its fetch fails or the fetcher
 * is closed before it is taken. It counts against the fetcher's limits as any block does.
 */
public record FetchToDisk(long maxInMemory, TempFiles files) {
  /** Every block into memory. */
  public static final FetchToDisk NEVER = new FetchToDisk(Long.MAX_VALUE, () -> {
    throw new IllegalStateException("no block is fetched to disk");
  });

  /** Where a block fetched to disk goes: a new file, in the executor's own disk directories. */
  @FunctionalInterface
  public interface TempFiles {
    /** A path no one else uses; it need not exist yet, and is created (or truncated) for the block. */
    Path create() throws IOException;
  }

  public FetchToDisk {
    if (maxInMemory < 0 || files == null) {
      throw new IllegalArgumentException("Fetching to disk needs a size limit of 0 or more"
          + " (spark.network.maxRemoteBlockSizeFetchToMem=" + maxInMemory + ") and where files go");
    }
  }

  /** Whether a block of {@code size} bytes goes to disk. */
  boolean toDisk(long size) {
    return size > maxInMemory;
  }
}
