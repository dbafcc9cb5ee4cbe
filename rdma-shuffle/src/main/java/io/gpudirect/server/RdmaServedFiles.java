package io.gpudirect.server;

import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.protocol.ShuffleRead;
import io.gpudirect.server.rdma.ReadRefusedException;
import io.gpudirect.server.rdma.ServedFiles;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The files and shuffle blocks one authenticated TCP connection may read, as its RDMA queue
 * pair reads them: the same checks as a TCP READ or SHUFFLE_READ, counted in the same server
 * counters.
 */
final class RdmaServedFiles implements ServedFiles {
  /** The server as its connections see it. */
  private final ServerContext server;
  private final String peer;
  private final AtomicInteger inFlight = new AtomicInteger();
  private volatile long lastEndNanos = System.nanoTime();

  RdmaServedFiles(ServerContext server, String peer) {
    this.server = server;
    this.peer = peer;
  }

  @Override
  public FileRange open(String path, FileVersion version, long offset, int length) {
    OpenFiles.OpenFile file = started(() -> FileRanges.open(server, path, version, offset, length));
    FileChannel fc = file.channel();
    return new Counted() {
      @Override
      public void readFully(long position, ByteBuffer dst) throws IOException {
        long at = offset + position;
        while (dst.hasRemaining()) {
          int n = fc.read(dst, at);
          if (n < 0) {
            throw new EOFException("File " + path + " shrank while being read for " + peer);
          }
          at += n;
        }
      }

      @Override
      public void checkUnchanged() {
        refusedAsRdma(() -> FileRanges.checkUnchanged(server, path, version, file, null));
      }

      @Override
      void closeFile() {
        try {
          fc.close();
        } catch (IOException ignored) {
          // read-only: nothing lost
        }
      }
    };
  }

  /**
   * {@inheritDoc} The index is read into a buffer of this call's: the queue pairs of one
   * connection serve on threads of their own.
   */
  @Override
  public BlockRange openBlock(ShuffleRead read, boolean checked) {
    BlockWindow window = started(() -> BlockWindow.open(server, read,
        ByteBuffer.allocate(BlockWindow.INDEX_SLICE), checked));
    final class Block extends Counted implements BlockRange {
      @Override
      public ShuffleData header() {
        return window.header();
      }

      @Override
      public void readFully(long position, ByteBuffer dst) throws IOException {
        window.readFully(position, dst);
      }

      @Override
      public void checkUnchanged() {
        refusedAsRdma(window::checkUnchanged);
      }

      @Override
      void closeFile() {
        window.close();
      }
    }
    return new Block();
  }

  /** Counts a request, opens what {@code open} opens, and counts the read started; a refusal is counted as an error. */
  private <T> T started(Supplier<T> open) {
    server.counters().countRequest();
    T opened = refusedAsRdma(open);
    server.counters().readStarted();
    inFlight.incrementAndGet();
    return opened;
  }

  private void refusedAsRdma(Runnable check) {
    refusedAsRdma(() -> {
      check.run();
      return null;
    });
  }

  private <T> T refusedAsRdma(Supplier<T> call) {
    try {
      return call.get();
    } catch (RequestRefusedException e) {
      server.counters().countError();
      throw new ReadRefusedException(e.code(), e.getMessage());
    }
  }

  /** A range being read: its bytes counted as sent, its end as a read ended. */
  private abstract class Counted implements FileRange {
    @Override
    public void sent(long n) {
      server.counters().countBytesSent(n);
    }

    /** Closes what the range holds open. */
    abstract void closeFile();

    @Override
    public void close() {
      server.counters().readEnded();
      lastEndNanos = System.nanoTime();
      inFlight.decrementAndGet();
      closeFile();
    }
  }

  /**
   * Nanoseconds since the last RDMA read ended; 0 while one is being served. A draining
   * server keeps the TCP connection (and so its queue pair) while its reads go on.
   */
  long idleNanos(long now) {
    return inFlight.get() > 0 ? 0 : now - lastEndNanos;
  }

  @Override
  public void failed(String why) {
    server.counters().countError();
  }
}
