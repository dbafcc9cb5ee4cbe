package io.gpudirect.server;

import io.gpudirect.server.RootDirectory.FoundFile;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
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
 * <p>What stays correct: the cache is keyed by the normalised path, but a path never leads to a
 * cached channel by itself. Every request walks its path from the root in full
 * ({@link RootDirectory#openFile}: confinement, no symlinks followed, a regular file), and a
 * cached channel is used only when that walk's {@code fstatat} of the last name, made relative
 * to the directory the walk has just opened, names the file the channel has open: same file key
 * (device and inode). Otherwise the path now names another file (replaced by a rename, or
 * deleted and created again, or reached through a link that is refused) and the walk opens it
 * anew or refuses it. And were a key ever to match the wrong file, the channel served would
 * still be one opened by such a walk, so a file that was below the root when it was opened:
 * the cache can make an answer stale, never let a request out of the root. An open descriptor
 * keeps its inode alive, so while a channel is cached its inode number cannot be given to
 * another file. A file changed in place keeps its inode: the cached descriptor reads exactly
 * what a fresh {@code open} would, and its size comes from the walk's {@code fstatat}. A file
 * system without file keys is opened afresh every time.
 *
 * <p>Bounds: at most {@link #MAX_OPEN} files per connection, the least recently used closed
 * first; all of them closed once the connection has been idle for a while (see
 * {@link #closeUnlessInUse}, so that an idle client does not hold a deleted file's blocks), and
 * when the connection ends. The connection's thread uses the files between {@link #acquire}
 * and {@link #release}; the server's sweeper closes them only outside that.
 */
final class OpenFiles implements RootDirectory.KeptDirectories, AutoCloseable {
  /** Files held open per connection. */
  static final int MAX_OPEN = 8;
  /** Directories held open per connection, so that walks to the files in them open nothing. */
  static final int MAX_DIRECTORIES = 8;

  /**
   * An open file of a request and its size, valid until {@link #release}. {@code fileKey} is
   * the identity of the file the request's walk saw when the channel is known to have that
   * file open, null when that is not known (no file keys, or the name changed during the open).
   * {@code path} is the normalised path below the root, for messages. ({@link FileRanges#open}
   * makes one for a read that keeps no files open, RDMA's: its caller closes the channel.)
   */
  record OpenFile(FileChannel channel, long size, Object fileKey,
      BasicFileAttributes attributes, String path) {}

  /**
   * A channel and the file key of what it has open, with that key as a version's file id
   * (made once, not per READ); a null key never matches.
   */
  record Entry(Object fileKey, FileChannel channel, String fileId) {
    Entry(Object fileKey, FileChannel channel) {
      this(fileKey, channel, fileKey == null ? "" : fileKey.toString());
    }
  }

  private record KeptDirectory(Object fileKey, SecureDirectoryStream<Path> dir) {}

  private final Map<String, Entry> open = new LinkedHashMap<>(16, 0.75f, true);
  /** Directories kept for walks: each was opened by a walk and is used only while it checks. */
  private final Map<String, KeptDirectory> directories = new LinkedHashMap<>(16, 0.75f, true);
  private boolean inUse;
  private boolean closed;

  /**
   * An open channel on the regular file {@code requested} names below {@code root}: the cached
   * one while the path still names the same file, a new one otherwise. Refused like any READ
   * of a path that does not name a regular file below the root.
   */
  OpenFile acquire(RootDirectory root, String requested) {
    RequestedPath path = RequestedPath.of(requested);
    String key = path.normalized();
    Entry cached;
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("the connection's files are closed");
      }
      inUse = true;
      cached = open.get(key);
    }
    FoundFile found;
    try {
      // Not under this object's lock: the walk may wait on a blocked open (FileOpeners), and
      // the sweeper must not wait for it. The sweeper leaves the files alone while inUse.
      found = root.openFile(path, cached == null ? null : cached.fileKey, this);
    } catch (RuntimeException e) {
      release();
      throw e;
    }
    synchronized (this) {
      if (found.channel() == null) {
        return new OpenFile(cached.channel, found.size(), cached.fileKey, found.attributes(), key);
      }
      Entry replaced = open.remove(key);
      if (replaced != null) {
        closeQuietly(replaced.channel);
      }
      open.put(key, new Entry(found.fileKey(), found.channel()));
      evictBeyond(MAX_OPEN, key);
      return new OpenFile(found.channel(), found.size(), found.fileKey(), found.attributes(), key);
    }
  }

  /**
   * The file kept open for the normalised path {@code normalized}, not checked against what the
   * path names now: for a small read that reads first and walks after
   * ({@link ReadAnswers}), whose bytes go out only if that walk finds this very file. Null when
   * none with a file key is kept; otherwise the files are in use until {@link #release}.
   */
  synchronized Entry peek(String normalized) {
    if (closed) {
      return null;
    }
    Entry e = open.get(normalized);
    if (e == null || e.fileKey == null) {
      return null;
    }
    inUse = true;
    return e;
  }

  @Override
  public synchronized SecureDirectoryStream<Path> get(String prefix, Object key) {
    KeptDirectory d = directories.get(prefix);
    return d != null && d.fileKey.equals(key) ? d.dir : null;
  }

  @Override
  public synchronized boolean keep(String prefix, Object key, SecureDirectoryStream<Path> dir) {
    KeptDirectory replaced = directories.put(prefix, new KeptDirectory(key, dir));
    if (replaced != null) {
      closeQuietly(replaced.dir);
    }
    Iterator<Map.Entry<String, KeptDirectory>> it = directories.entrySet().iterator();
    while (directories.size() > MAX_DIRECTORIES && it.hasNext()) {
      Map.Entry<String, KeptDirectory> eldest = it.next();
      if (!eldest.getKey().equals(prefix)) {
        it.remove();
        closeQuietly(eldest.getValue().dir);
      }
    }
    return true;
  }

  @Override
  public synchronized void forget(SecureDirectoryStream<Path> dir) {
    directories.values().removeIf(d -> d.dir == dir);
  }

  /** The request that acquired a file is done with it. */
  synchronized void release() {
    inUse = false;
  }

  /**
   * Closes every file unless a request holds them now; called by the server's sweeper once the
   * connection has been idle for a while ({@link ServerConnection#closeIdleFiles}, which keeps
   * the time: no clock is read per request here).
   */
  synchronized void closeUnlessInUse() {
    if (!inUse && (!open.isEmpty() || !directories.isEmpty())) {
      evictBeyond(0, null);
      closeDirectories();
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
    closeDirectories();
  }

  private void closeDirectories() {
    directories.values().forEach(d -> closeQuietly(d.dir));
    directories.clear();
  }

  private void evictBeyond(int max, String keep) {
    Iterator<Map.Entry<String, Entry>> it = open.entrySet().iterator();
    while (open.size() > max && it.hasNext()) {
      Map.Entry<String, Entry> eldest = it.next();
      if (!eldest.getKey().equals(keep)) {
        it.remove();
        closeQuietly(eldest.getValue().channel);
      }
    }
  }

  private static void closeQuietly(java.io.Closeable c) {
    try {
      c.close();
    } catch (IOException ignored) {
      // read-only: nothing lost
    }
  }
}
