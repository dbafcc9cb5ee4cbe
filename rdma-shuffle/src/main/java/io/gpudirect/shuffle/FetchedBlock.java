package io.gpudirect.shuffle;

import io.gpudirect.GpuDirectException;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.protocol.ShuffleBlockId;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * A block's bytes, fetched and checked, in direct memory charged to the fetcher's allocator: one
 * buffer, or several for a block longer than the server's largest answer. The block owns them
 * until {@link #close()}, which gives them back; nothing read from it may be kept past that.
 * Not thread-safe: one reader at a time, as a reduce task reads a block.
 */
public final class FetchedBlock implements AutoCloseable {
  private final ShuffleBlockId id;
  private final InetSocketAddress server;
  private final long size;
  /** In block order; empty for an empty block. */
  private final List<HostBuffer> windows;
  private boolean closed;

  FetchedBlock(ShuffleBlockId id, InetSocketAddress server, long size, List<HostBuffer> windows) {
    this.id = id;
    this.server = server;
    this.size = size;
    this.windows = windows;
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
   * The bytes as one read-only buffer, valid until {@link #close()}. Only for a block that came
   * in one window (at most the server's maxReadLength, 64 MiB by default); read a longer one
   * through {@link #inputStream()}.
   */
  public ByteBuffer nioBuffer() {
    checkOpen();
    if (windows.size() > 1) {
      throw new GpuDirectException("Shuffle block " + id.name() + " (" + id.describe() + ") is "
          + size + " bytes in " + windows.size() + " buffers; read it with inputStream()");
    }
    return windows.isEmpty() ? ByteBuffer.allocate(0).asReadOnlyBuffer()
        : windows.get(0).nioBuffer().asReadOnlyBuffer();
  }

  /** The bytes as a stream over the block's buffers, valid until {@link #close()}. */
  public InputStream inputStream() {
    checkOpen();
    return new InputStream() {
      private int window;
      private ByteBuffer current = next();

      private ByteBuffer next() {
        return window < windows.size() ? windows.get(window++).nioBuffer() : null;
      }

      private boolean advance() {
        checkOpen();
        while (current != null && !current.hasRemaining()) {
          current = next();
        }
        return current != null;
      }

      @Override
      public int read() {
        return advance() ? current.get() & 0xff : -1;
      }

      @Override
      public int read(byte[] b, int off, int len) {
        java.util.Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) {
          return 0;
        }
        if (!advance()) {
          return -1;
        }
        int n = Math.min(len, current.remaining());
        current.get(b, off, n);
        return n;
      }

      @Override
      public int available() {
        return current == null || closed ? 0 : current.remaining();
      }
    };
  }

  /** Gives the block's memory back; idempotent. */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      windows.forEach(HostBuffer::close);
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new GpuDirectException("Shuffle block " + id.name() + " (" + id.describe()
          + ") was closed; its bytes are gone");
    }
  }

  @Override
  public String toString() {
    return "FetchedBlock[" + id.name() + ", " + size + " bytes from " + server + "]";
  }
}
