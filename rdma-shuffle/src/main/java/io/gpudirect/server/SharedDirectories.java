package io.gpudirect.server;

import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The sub-directories of one shuffle directory ({@code blockmgr-UUID/00} to {@code 3f}) kept open
 * for every connection's walks, for the server's life. A shuffle request opens a map output's
 * index, data and checksum files, each in a sub-directory of its own hash, and every open below
 * the root goes through an opener thread ({@link FileOpeners}); opening the sub-directory again
 * for each file doubled those hand-offs, a third of a 1 MiB block's time on the server (2-core
 * build VM, docs/benchmarks.md). Kept per connection ({@link OpenFiles}, eight), Spark's 64
 * sub-directories thrashed, and 64 per connection would cost every executor's server a
 * descriptor per sub-directory per peer.
 *
 * <p>What stays correct is what {@link RootDirectory.KeptDirectories} promises: a walk uses a
 * kept directory only while its {@code fstatat} of the name finds that very directory. Several
 * connections' threads walk through one kept directory at once, which a
 * {@link SecureDirectoryStream} allows; so none is closed while the server runs: one displaced
 * (two walks kept the same name at once, or a directory replaced) is retired, closed with the
 * server. At most {@link #MAX_HELD} are held, kept and retired; beyond that walks keep nothing, so
 * that a local user replacing sub-directories cannot make the server hold more.
 */
final class SharedDirectories implements RootDirectory.KeptDirectories, AutoCloseable {
  /** Spark's 64 sub-directories, and room for the ones displaced. */
  static final int MAX_HELD = 256;

  private record Kept(Object fileKey, SecureDirectoryStream<Path> dir) {}

  private final Map<String, Kept> kept = new HashMap<>();
  private final List<SecureDirectoryStream<Path>> retired = new ArrayList<>();
  private boolean closed;

  @Override
  public synchronized SecureDirectoryStream<Path> get(String prefix, Object key) {
    Kept d = kept.get(prefix);
    return d != null && d.fileKey.equals(key) ? d.dir : null;
  }

  @Override
  public synchronized boolean keep(String prefix, Object key, SecureDirectoryStream<Path> dir) {
    if (closed || kept.size() + retired.size() >= MAX_HELD) {
      return false;
    }
    Kept displaced = kept.put(prefix, new Kept(key, dir));
    if (displaced != null) {
      retired.add(displaced.dir);
    }
    return true;
  }

  @Override
  public synchronized void forget(SecureDirectoryStream<Path> dir) {
    kept.values().removeIf(d -> d.dir == dir);
    retired.remove(dir);
  }

  /** How many directories are held open, kept and retired (for tests). */
  synchronized int held() {
    return kept.size() + retired.size();
  }

  /** How many are kept for walks (for tests). */
  synchronized int keptCount() {
    return kept.size();
  }

  @Override
  public synchronized void close() {
    closed = true;
    kept.values().forEach(d -> closeQuietly(d.dir));
    retired.forEach(SharedDirectories::closeQuietly);
    kept.clear();
    retired.clear();
  }

  private static void closeQuietly(SecureDirectoryStream<Path> d) {
    try {
      d.close();
    } catch (IOException ignored) {
      // read-only: nothing lost
    }
  }
}
