package io.gpudirect.shuffle;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.ShuffleBlockId;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * A block's bytes, fetched and checked: in direct memory charged to the fetcher's allocator, or,
 * for a block over {@link FetchToDisk}'s limit, in a file of its own. The block owns them until
 * {@link #close()}, which gives the memory back or deletes the file; nothing read from it may be
 * kept past that. Not thread-safe: one reader at a time, as a reduce task reads a block.
 */
public abstract sealed class FetchedBlock implements AutoCloseable permits BufferedBlock, DownloadedBlock {
  private final ShuffleBlockId id;
  private final InetSocketAddress server;
  private final long size;
  private final long requestNanos;
  boolean closed;

  FetchedBlock(ShuffleBlockId id, InetSocketAddress server, long size, long requestNanos) {
    this.id = id;
    this.server = server;
    this.size = size;
    this.requestNanos = requestNanos;
  }

  public ShuffleBlockId id() {
    return id;
  }

  /** The server it was fetched from. */
  public InetSocketAddress server() {
    return server;
  }

  /** The block's length in bytes, as its map output's index says. */
  public long size() {
    return size;
  }

  /**
   * How long its request took, from its sending (connecting included, where it had to) to its last
   * byte in, checked and, for a block on disk, written: Spark's "remote requests duration" counts
   * this for each of its requests (of one block here).
   */
  public long requestNanos() {
    return requestNanos;
  }

  /** Whether its bytes are in a file (fetched to disk, see {@link FetchToDisk}) rather than in memory. */
  public abstract boolean onDisk();

  /**
   * The bytes as one read-only buffer, valid until {@link #close()}. Only for a block that came
   * into memory in one window (at most the server's maxReadLength, 64 MiB by default); read a
   * longer one, or one on disk, through {@link #inputStream()}.
   */
  public abstract ByteBuffer nioBuffer();

  /** The bytes as a stream from their start, valid until {@link #close()}. */
  public abstract InputStream inputStream();

  /** Gives the block's memory back, or deletes its file; idempotent. */
  @Override
  public abstract void close();

  void checkOpen() {
    if (closed) {
      throw new GpuDirectException("Shuffle block " + id.name() + " (" + id.describe()
          + ") was closed; its bytes are gone");
    }
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + "[" + id.name() + ", " + size + " bytes from " + server + "]";
  }
}
