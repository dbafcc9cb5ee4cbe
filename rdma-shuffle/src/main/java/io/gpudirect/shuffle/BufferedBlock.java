package io.gpudirect.shuffle;

import io.gpudirect.GpuDirectException;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.protocol.ShuffleBlockId;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;

/** A block fetched into memory: one buffer, or several for a block longer than the server's largest answer. */
final class BufferedBlock extends FetchedBlock {
  /** In block order; empty for an empty block. */
  private final List<HostBuffer> windows;

  BufferedBlock(ShuffleBlockId id, InetSocketAddress server, long size, long requestNanos, List<HostBuffer> windows) {
    super(id, server, size, requestNanos);
    this.windows = windows;
  }

  @Override
  public boolean onDisk() {
    return false;
  }

  @Override
  public ByteBuffer nioBuffer() {
    checkOpen();
    if (windows.size() > 1) {
      throw new GpuDirectException("Shuffle block " + id().name() + " (" + id().describe() + ") is "
          + size() + " bytes in " + windows.size() + " buffers; read it with inputStream()");
    }
    return windows.isEmpty() ? ByteBuffer.allocate(0).asReadOnlyBuffer()
        : windows.get(0).nioBuffer().asReadOnlyBuffer();
  }

  @Override
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
        Objects.checkFromIndexSize(off, len, b.length);
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

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      windows.forEach(HostBuffer::close);
    }
  }
}
