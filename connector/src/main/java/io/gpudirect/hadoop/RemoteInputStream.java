package io.gpudirect.hadoop;

import io.gpudirect.GpuDirectException;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.remote.TaskFetchCounters;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Locale;
import org.apache.hadoop.fs.ByteBufferPositionedReadable;
import org.apache.hadoop.fs.ByteBufferReadable;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.StreamCapabilities;

/**
 * A seekable stream over one remote file. Reads of at least {@link #READ_AHEAD} bytes, and
 * every positioned read, go straight from the socket into the caller's buffer (byte array or
 * ByteBuffer) with no copy in this class. Smaller sequential reads are served from a
 * read-ahead buffer, so a reader that parses a few bytes at a time does not pay a round trip
 * per call. Positioned reads leave the stream's position alone and may run concurrently.
 *
 * <p>With a {@link ReadAhead} (the prefetch of a reader's {@link ReadPlan}), sequential reads
 * inside the plan are copied out of pieces fetched ahead; everything else is read as above.
 */
final class RemoteInputStream extends FSInputStream
    implements ByteBufferReadable, ByteBufferPositionedReadable, StreamCapabilities {
  static final int READ_AHEAD = 64 * 1024;

  private final RemoteStore store;
  private final String path;
  /** The version read, taken when the stream was opened: a change fails the stream's reads. */
  private final FileVersion version;
  private final String uri;
  private final long length;
  private final FileSystem.Statistics statistics;
  private final ByteBuffer readAhead = ByteBuffer.allocate(READ_AHEAD).limit(0);
  /** File offset of readAhead's first byte. */
  private long readAheadStart;
  /**
   * The small-read window that reached the file's end, kept apart from {@link #readAhead}: Parquet
   * reads its footer there, then dictionary pages elsewhere (its dictionary filter), then comes
   * back for the page indexes just before the footer. Null until a small read reaches the end.
   */
  private ByteBuffer tail;
  private long tailStart;
  private long pos;
  /** Fetches the reader's plan ahead; null without one. */
  private final ReadAhead prefetch;
  private volatile boolean closed;

  RemoteInputStream(RemoteStore store, String path, FileVersion version, String uri, long length,
      FileSystem.Statistics statistics) {
    this(store, path, version, uri, length, statistics, null);
  }

  RemoteInputStream(RemoteStore store, String path, FileVersion version, String uri, long length,
      FileSystem.Statistics statistics, ReadAhead prefetch) {
    this.store = store;
    this.path = path;
    this.version = version;
    this.uri = uri;
    this.length = length;
    this.statistics = statistics;
    this.prefetch = prefetch;
    if (prefetch != null) {
      prefetch.start();
    }
  }

  @Override
  public synchronized void seek(long target) throws IOException {
    checkOpen();
    if (target < 0 || target > length) {
      throw new EOFException("Cannot seek to " + target + " in " + uri + " of " + length + " bytes");
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

  /** Moves the position; fetches nothing. */
  @Override
  public synchronized long skip(long n) throws IOException {
    checkOpen();
    if (n <= 0) {
      return 0;
    }
    long skipped = Math.min(n, length - pos);
    pos += skipped;
    return skipped;
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
    int fetchedAhead = prefetch == null ? 0 : prefetchedInto(dst, n);
    if (fetchedAhead > 0) {
      n = fetchedAhead;
    } else if (n >= READ_AHEAD) {
      fetchInto(pos, dst, n);
    } else {
      n = fromReadAhead(dst, n);
    }
    pos += n;
    return n;
  }

  // ---- positioned reads: PositionedReadable and ByteBufferPositionedReadable

  @Override
  public int read(long position, byte[] buffer, int offset, int len) throws IOException {
    return read(position, ByteBuffer.wrap(buffer, offset, len));
  }

  @Override
  public void readFully(long position, byte[] buffer, int offset, int len) throws IOException {
    readFully(position, ByteBuffer.wrap(buffer, offset, len));
  }

  @Override
  public int read(long position, ByteBuffer buf) throws IOException {
    checkOpen();
    checkPosition(position);
    if (!buf.hasRemaining()) {
      return 0;
    }
    if (position >= length) {
      return -1;
    }
    int n = (int) Math.min(buf.remaining(), length - position);
    fetchInto(position, buf, n);
    return n;
  }

  @Override
  public void readFully(long position, ByteBuffer buf) throws IOException {
    checkOpen();
    checkPosition(position);
    int len = buf.remaining();
    if (position + len > length) {
      throw new EOFException("Cannot read " + len + " bytes at " + position + " of " + uri
          + ": the file has " + length + " bytes");
    }
    fetchInto(position, buf, len);
  }

  @Override
  public boolean hasCapability(String capability) {
    switch (capability.toLowerCase(Locale.ROOT)) {
      case StreamCapabilities.READBYTEBUFFER:
      case StreamCapabilities.PREADBYTEBUFFER:
        return true;
      default:
        return false;
    }
  }

  /** Fills {@code n} bytes of {@code dst} from its position, straight from the socket. */
  private void fetchInto(long offset, ByteBuffer dst, int n) throws IOException {
    ByteBuffer slice = dst.slice();
    slice.limit(n);
    fetch(offset, slice);
    dst.position(dst.position() + n);
  }

  /** Up to {@code n} bytes at pos from the prefetched pieces; 0 when there are none there. */
  private int prefetchedInto(ByteBuffer dst, int n) throws IOException {
    int limit = dst.limit();
    dst.limit(dst.position() + n);
    try {
      int got = prefetch.read(pos, dst);
      if (got > 0 && statistics != null) {
        statistics.incrementBytesRead(got);
      }
      return got;
    } finally {
      dst.limit(limit);
    }
  }

  private int fromReadAhead(ByteBuffer dst, int n) throws IOException {
    ByteBuffer window = readAhead;
    long windowStart = readAheadStart;
    if (tail != null && pos >= tailStart) {
      window = tail;
      windowStart = tailStart;
    } else if (pos < readAheadStart || pos >= readAheadStart + readAhead.limit()) {
      // Near the end, the window ends at the end: a reader that first reads a file's last
      // bytes (Parquet's footer length, ORC's postscript) reads the footer before them next,
      // and finds it here when it is smaller than the window, one round trip instead of two.
      windowStart = Math.max(0, Math.min(pos, length - READ_AHEAD));
      int len = (int) Math.min(READ_AHEAD, length - windowStart);
      boolean reachesEnd = windowStart + len == length;
      window = reachesEnd ? ByteBuffer.allocate(len) : readAhead.clear().limit(len);
      fetch(windowStart, window);
      window.flip();
      if (reachesEnd) {
        tail = window;
        tailStart = windowStart;
      } else {
        readAheadStart = windowStart;
      }
    }
    ByteBuffer view = window.duplicate();
    view.position((int) (pos - windowStart));
    int take = Math.min(n, view.remaining());
    view.limit(view.position() + take);
    dst.put(view);
    return take;
  }

  private void fetch(long offset, ByteBuffer dst) throws IOException {
    int bytes = dst.remaining();
    long start = System.nanoTime();
    try {
      store.read(path, version, offset, dst);
    } catch (GpuDirectException e) {
      throw new IOException("Cannot read " + bytes + " bytes at " + offset + " of " + uri + ": "
          + e.getMessage(), e);
    }
    TaskFetchCounters.record(bytes, System.nanoTime() - start);
    if (statistics != null) {
      statistics.incrementBytesRead(bytes);
      statistics.incrementReadOps(1);
    }
  }

  private void checkPosition(long position) throws EOFException {
    if (position < 0) {
      throw new EOFException("Cannot read at negative position " + position + " of " + uri);
    }
  }

  private void checkOpen() throws IOException {
    if (closed) {
      throw new IOException("Stream closed: " + uri);
    }
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      if (prefetch != null) {
        prefetch.close();
      }
    }
  }
}
