package io.gpudirect.server;

import io.gpudirect.protocol.FileVersion;
import io.gpudirect.server.rdma.ReadRefusedException;
import io.gpudirect.server.rdma.ServedFiles;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * The files one authenticated TCP connection may read, as its RDMA queue pair reads them:
 * the same checks as a TCP READ, counted in the same server counters.
 */
final class RdmaServedFiles implements ServedFiles {
  /** The server as its connections see it. */
  private final ServerContext server;
  private final String peer;
  private final java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();
  private volatile long lastEndNanos = System.nanoTime();

  RdmaServedFiles(ServerContext server, String peer) {
    this.server = server;
    this.peer = peer;
  }

  @Override
  public FileRange open(String path, FileVersion version, long offset, int length) {
    server.counters().countRequest();
    OpenFiles.OpenFile file;
    try {
      file = FileRanges.open(server, path, version, offset, length);
    } catch (RequestRefusedException e) {
      server.counters().countError();
      throw new ReadRefusedException(e.code(), e.getMessage());
    }
    server.counters().readStarted();
    inFlight.incrementAndGet();
    FileChannel fc = file.channel();
    return new FileRange() {
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
        try {
          FileRanges.checkUnchanged(server, path, version, file, null);
        } catch (RequestRefusedException e) {
          server.counters().countError();
          throw new ReadRefusedException(e.code(), e.getMessage());
        }
      }

      @Override
      public void sent(long n) {
        server.counters().countBytesSent(n);
      }

      @Override
      public void close() {
        server.counters().readEnded();
        lastEndNanos = System.nanoTime();
        inFlight.decrementAndGet();
        try {
          fc.close();
        } catch (IOException ignored) {
          // read-only: nothing lost
        }
      }
    };
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
