package io.gpudirect.hadoop;

import io.gpudirect.client.RemoteStore;
import io.gpudirect.remote.TaskFetchCounters;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.hadoop.fs.ByteBufferReadable;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileSystem;

/**
 * A seekable stream over one remote file. Large reads go straight from the socket into the
 * caller's buffer; reads smaller than the read-ahead buffer are served from it, so a reader
 * that parses a few bytes at a time does not pay a round trip per call.
 */
final class RemoteInputStream extends FSInputStream implements ByteBufferReadable {
  static final int READ_AHEAD = 64 * 1024;

  private final RemoteStore store;
  private final String path;
  private final long length;
  private final FileSystem.Statistics statistics;
  private final ByteBuffer readAhead = ByteBuffer.allocate(READ_AHEAD).limit(0);
  /** File offset of readAhead's first byte. */
  private long readAheadStart;
  private long pos;
  private boolean closed;

  RemoteInputStream(RemoteStore store, String path, long length, FileSystem.Statistics statistics) {
    this.store = store;
    this.path = path;
    this.length = length;
    this.statistics = statistics;
  }

  @Override
  public synchronized void seek(long target) throws IOException {
    checkOpen();
    if (target < 0 || target > length) {
      throw new EOFException("Cannot seek to " + target + " in " + describe() + " of " + length + " bytes");
    }
    pos = target;
  }

  @Override
  public synchronized long getPos() {
    return pos;
  }

  @Override
  public boolean seekToNewSource(long targetPos) {
    return false;
  }

  @Override
  public synchronized int available() throws IOException {
    checkOpen();
    return (int) Math.min(Integer.MAX_VALUE, length - pos);
  }

  @Override
  public synchronized int read() throws IOException {
    byte[] one = new byte[1];
    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public synchronized int read(byte[] b, int off, int len) throws IOException {
    return read(ByteBuffer.wrap(b, off, len));
  }

  @Override
  public synchronized int read(ByteBuffer dst) throws IOException {
    checkOpen();
    if (!dst.hasRemaining()) {
      return 0;
    }
    if (pos >= length) {
      return -1;
    }
    int n = (int) Math.min(dst.remaining(), length - pos);
    if (n >= READ_AHEAD) {
      ByteBuffer slice = dst.slice();
      slice.limit(n);
      fetch(pos, slice);
      dst.position(dst.position() + n);
    } else {
      n = fromReadAhead(dst, n);
    }
    pos += n;
    return n;
  }

  /** Positioned read: does not move the stream's position, as PositionedReadable requires. */
  @Override
  public int read(long position, byte[] buffer, int offset, int len) throws IOException {
    checkOpen();
    if (position >= length) {
      return -1;
    }
    int n = (int) Math.min(len, length - position);
    fetch(position, ByteBuffer.wrap(buffer, offset, n));
    return n;
  }

  @Override
  public void readFully(long position, byte[] buffer, int offset, int len) throws IOException {
    if (position < 0 || position + len > length) {
      throw new EOFException("Cannot read " + len + " bytes at " + position + " of " + describe()
          + ": the file has " + length + " bytes");
    }
    checkOpen();
    fetch(position, ByteBuffer.wrap(buffer, offset, len));
  }

  private int fromReadAhead(ByteBuffer dst, int n) throws IOException {
    if (pos < readAheadStart || pos >= readAheadStart + readAhead.limit()) {
      readAhead.clear();
      readAhead.limit((int) Math.min(READ_AHEAD, length - pos));
      fetch(pos, readAhead);
      readAhead.flip();
      readAheadStart = pos;
    }
    ByteBuffer view = readAhead.duplicate();
    view.position((int) (pos - readAheadStart));
    int take = Math.min(n, view.remaining());
    view.limit(view.position() + take);
    dst.put(view);
    return take;
  }

  private void fetch(long offset, ByteBuffer dst) {
    int bytes = dst.remaining();
    long start = System.nanoTime();
    store.read(path, offset, dst);
    TaskFetchCounters.record(bytes, System.nanoTime() - start);
    if (statistics != null) {
      statistics.incrementBytesRead(bytes);
      statistics.incrementReadOps(1);
    }
  }

  private void checkOpen() throws IOException {
    if (closed) {
      throw new IOException("Stream closed: " + describe());
    }
  }

  private String describe() {
    return "gpudirect://" + store.server().getHostString() + ":" + store.server().getPort() + "/" + path;
  }

  @Override
  public synchronized void close() {
    closed = true;
  }
}
