package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.server.RootDirectory.CheckedFile;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The files one connection keeps open between its requests, so that a client reading a file
 * chunk by chunk, or 4 KiB at a time, does not pay an {@code open}, an {@code fstat} and a
 * {@code close} per request (a third of the server's system calls for a 4 KiB read: see
 * docs/benchmarks.md).
 *
 * <p>What stays correct: every request is still checked in full by
 * {@link RootDirectory#checkedFile} (confinement, symlinks, regular file), and that check
 * {@code lstat}s the real path. A cached channel is used only when that {@code lstat} names
 * the file the channel has open: same file key (device and inode). Otherwise the path now
 * names another file (replaced by a rename, or deleted and created again) and it is opened
 * again. An open descriptor keeps its inode alive, so while a channel is cached its inode
 * number cannot be given to another file. A file changed in place keeps its inode: the cached
 * descriptor reads exactly what a fresh {@code open} would, and its size comes from the same
 * {@code lstat}. A file system without file keys is opened afresh every time.
 *
 * <p>Bounds: at most {@link #MAX_OPEN} files per connection, the least recently used closed
 * first; all of them closed once the connection has been idle for a while (see
 * {@link #closeIfIdle}, so that an idle client does not hold a deleted file's blocks), and
 * when the connection ends. The connection's thread uses the files between {@link #acquire}
 * and {@link #release}; the server's sweeper closes them only outside that.
 */
final class OpenFiles implements AutoCloseable {
  /** Files held open per connection. */
  static final int MAX_OPEN = 8;

  /**
   * An open file of a request and its size, valid until {@link #release}. {@code fileKey} is
   * the identity of the file the request's lstat saw when the channel is known to have that
   * file open, null when that is not known (no file keys, or the path changed during the open).
   */
  record OpenFile(FileChannel channel, long size, Object fileKey) {}

  /** A channel and the file key of what it has open; a null key never matches. */
  private record Entry(Object fileKey, FileChannel channel) {}

  private final Map<Path, Entry> open = new LinkedHashMap<>(16, 0.75f, true);
  private boolean inUse;
  private boolean closed;
  private long lastReleasedNanos = System.nanoTime();

  /**
   * An open channel on {@code file}: the cached one while the path still names the same file,
   * a new one otherwise. Refused with {@code IO_ERROR} when the file cannot be opened.
   */
  synchronized OpenFile acquire(CheckedFile file, String requested) {
    if (closed) {
      throw new IllegalStateException("the connection's files are closed");
    }
    Path path = file.path();
    BasicFileAttributes checked = file.attributes();
    Object key = checked.fileKey();
    Entry e = open.get(path);
    if (e != null && key != null && key.equals(e.fileKey)) {
      inUse = true;
      return new OpenFile(e.channel, checked.size(), key);
    }
    if (e != null) {
      open.remove(path);
      closeQuietly(e.channel);
    }
    FileChannel fc;
    long size;
    try {
      fc = FileChannel.open(path, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
    } catch (IOException ex) {
      throw new RequestRefusedException(ErrorCode.IO_ERROR,
          "Cannot open " + RootDirectory.show(requested) + ": " + ex, ex);
    }
    try {
      size = fc.size();
    } catch (IOException ex) {
      closeQuietly(fc);
      throw new RequestRefusedException(ErrorCode.IO_ERROR,
          "Cannot read the size of " + RootDirectory.show(requested) + ": " + ex, ex);
    }
    // Java cannot ask an open channel for its inode. The check's lstat before the open and
    // this one after it name the same file unless the path was being replaced just then; in
    // that case this channel serves this request (as an uncached open would) but is never
    // matched again.
    Object cachedKey = key != null && key.equals(keyNow(path)) ? key : null;
    open.put(path, new Entry(cachedKey, fc));
    evictBeyond(MAX_OPEN, path);
    inUse = true;
    return new OpenFile(fc, size, cachedKey);
  }

  /** The request that acquired a file is done with it. */
  synchronized void release() {
    inUse = false;
    lastReleasedNanos = System.nanoTime();
  }

  /**
   * Closes every file when none has been used for {@code idleNanos}; called by the server's
   * sweeper, never while a request holds one.
   */
  synchronized void closeIfIdle(long now, long idleNanos) {
    if (!inUse && !open.isEmpty() && now - lastReleasedNanos >= idleNanos) {
      evictBeyond(0, null);
    }
  }

  /** How many files are open now (for tests). */
  synchronized int size() {
    return open.size();
  }

  /** Closes every file; the connection has ended. */
  @Override
  public synchronized void close() {
    closed = true;
    evictBeyond(0, null);
  }

  private void evictBeyond(int max, Path keep) {
    Iterator<Map.Entry<Path, Entry>> it = open.entrySet().iterator();
    while (open.size() > max && it.hasNext()) {
      Map.Entry<Path, Entry> eldest = it.next();
      if (!eldest.getKey().equals(keep)) {
        it.remove();
        closeQuietly(eldest.getValue().channel);
      }
    }
  }

  private static Object keyNow(Path path) {
    try {
      return Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
          .fileKey();
    } catch (IOException e) {
      return null;
    }
  }

  private static void closeQuietly(FileChannel fc) {
    try {
      fc.close();
    } catch (IOException ignored) {
      // read-only: nothing lost
    }
  }
}
