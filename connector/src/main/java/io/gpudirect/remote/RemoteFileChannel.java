package io.gpudirect.remote;

import io.gpudirect.client.RemoteStore;
import io.gpudirect.protocol.FileVersion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NonWritableChannelException;
import java.nio.channels.SeekableByteChannel;

/**
 * A read-only channel over one version of a remote file. Each read goes straight into the
 * caller's buffer: Arrow's reader hands it the memory of the vector it is filling, so
 * record-batch bodies cross from the socket into Arrow buffers with no copy in between. Every
 * read names the version, so a file that changes fails the read rather than mixing bytes.
 */
public final class RemoteFileChannel implements SeekableByteChannel {
  private final RemoteStore store;
  private final String path;
  private final FileVersion version;
  private final long size;
  private long position;
  private boolean open = true;

  public RemoteFileChannel(RemoteStore store, String path, FileVersion version, long size) {
    this.store = store;
    this.path = path;
    this.version = version;
    this.size = size;
  }

  @Override
  public int read(ByteBuffer dst) throws IOException {
    ensureOpen();
    if (position >= size) {
      return -1;
    }
    int n = (int) Math.min(dst.remaining(), size - position);
    if (n == 0) {
      return 0;
    }
    ByteBuffer slice = dst.slice();
    slice.limit(n);
    long start = System.nanoTime();
    store.read(path, version, position, slice);
    TaskFetchCounters.record(n, System.nanoTime() - start);
    dst.position(dst.position() + n);
    position += n;
    return n;
  }

  @Override
  public int write(ByteBuffer src) {
    throw new NonWritableChannelException();
  }

  @Override
  public long position() throws IOException {
    ensureOpen();
    return position;
  }

  @Override
  public SeekableByteChannel position(long newPosition) throws IOException {
    ensureOpen();
    if (newPosition < 0) {
      throw new IllegalArgumentException("Negative position " + newPosition + " in " + path);
    }
    position = newPosition;
    return this;
  }

  @Override
  public long size() throws IOException {
    ensureOpen();
    return size;
  }

  @Override
  public SeekableByteChannel truncate(long s) {
    throw new NonWritableChannelException();
  }

  @Override
  public boolean isOpen() {
    return open;
  }

  /** The store is shared by the JVM and stays open. */
  @Override
  public void close() {
    open = false;
  }

  private void ensureOpen() throws ClosedChannelException {
    if (!open) {
      throw new ClosedChannelException();
    }
  }
}
