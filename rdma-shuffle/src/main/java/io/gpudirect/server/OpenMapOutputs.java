package io.gpudirect.server;

import io.gpudirect.server.RootDirectory.FoundFile;
import io.gpudirect.server.ShuffleDirectories.Placed;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The map outputs' files an executor's server keeps open between requests, for all its
 * connections: a reducer asks for one block of each map output, and each request found its
 * index, data and checksum files by opening them, every open on an opener thread
 * ({@link FileOpeners}); those hand-offs were most of a block's time on the server
 * (docs/benchmarks.md, "Shuffle block windows freed when given back").
 *
 * <p>What stays correct is what {@link OpenFiles} keeps for a connection's READs: every request
 * still walks to its file from the root, and a kept channel is used only when that walk's
 * {@code fstatat} finds the very file it has open (same file key). Spark writes a map output's
 * files under temporary names and renames them into place, so a map task run again gives new
 * files, which are opened afresh. Channels are read only by position, so requests on several
 * connections share one; each holds its {@link Lease} until its bytes are sent, and a channel is
 * closed only once neither the list nor any lease holds it. Files unused for a while are closed
 * ({@link #closeIdle}), so that the blocks of a shuffle Spark has deleted are not held for long;
 * at most {@link #MAX_OPEN} are kept, the least recently used closed first.
 */
final class OpenMapOutputs implements AutoCloseable {
  /** Channels kept: a few thousand map outputs' three files would be too many descriptors. */
  static final int MAX_OPEN = 384;

  /** An open channel, and how many hold it: the list while it keeps it, and each lease. */
  private static final class Held {
    final FileChannel channel;
    final Object fileKey;
    int holders;
    long lastUsedNanos;

    Held(FileChannel channel, Object fileKey, int holders) {
      this.channel = channel;
      this.fileKey = fileKey;
      this.holders = holders;
    }
  }

  /** A map output's file for one request: what its walk found, open until closed. */
  final class Lease implements AutoCloseable {
    private final FoundFile file;
    /** Null for a file not kept: closing the lease closes it. */
    private final Held held;
    private boolean closed;

    private Lease(FoundFile file, Held held) {
      this.file = file;
      this.held = held;
      synchronized (OpenMapOutputs.this) {
        leases++;
      }
    }

    /** The file: its channel is the lease's, never to be closed by its user. */
    FoundFile file() {
      return file;
    }

    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      synchronized (OpenMapOutputs.this) {
        leases--;
      }
      if (held == null) {
        file.close();
      } else {
        release(held);
      }
    }
  }

  private final Map<String, Held> open = new LinkedHashMap<>(16, 0.75f, true);
  private boolean closed;
  /** Leases not closed yet. */
  private int leases;

  /** The file {@code placed} names, kept open or opened; refused as any open below a root is. */
  Lease open(Placed placed) {
    String key = placed.show();
    Held cached;
    synchronized (this) {
      cached = closed ? null : open.get(key);
      if (cached != null) {
        cached.holders++;
      }
    }
    FoundFile found;
    try {
      found = placed.directory().openFile(placed.path(), cached == null ? null : cached.fileKey,
          placed.subDirectories());
    } catch (RuntimeException e) {
      if (cached != null) {
        release(cached);
      }
      throw e;
    }
    if (found.channel() == null) {
      synchronized (this) {
        cached.lastUsedNanos = System.nanoTime();
      }
      return new Lease(new FoundFile(cached.channel, found.size(), found.attributes(), cached.fileKey), cached);
    }
    if (cached != null) {
      release(cached);
    }
    if (found.fileKey() == null) {
      return new Lease(found, null);
    }
    Held held = new Held(found.channel(), found.fileKey(), 2);
    held.lastUsedNanos = System.nanoTime();
    synchronized (this) {
      if (closed) {
        held.holders = 1;
      } else {
        Held replaced = open.put(key, held);
        if (replaced != null) {
          drop(replaced);
        }
        Iterator<Held> eldest = open.values().iterator();
        while (open.size() > MAX_OPEN) {
          drop(eldest.next());
          eldest.remove();
        }
      }
    }
    return new Lease(found, held);
  }

  /** Stops keeping the files not used since {@code idleNanos} before {@code now}. */
  synchronized void closeIdle(long now, long idleNanos) {
    open.values().removeIf(h -> {
      if (now - h.lastUsedNanos < idleNanos) {
        return false;
      }
      drop(h);
      return true;
    });
  }

  /** How many leases are open (for tests: none once no request is being answered). */
  synchronized int leases() {
    return leases;
  }

  /** How many files are kept open (for tests). */
  synchronized int size() {
    return open.size();
  }

  @Override
  public synchronized void close() {
    closed = true;
    open.values().forEach(this::drop);
    open.clear();
  }

  private synchronized void release(Held h) {
    drop(h);
  }

  /** One holder lets go of {@code h}; the last closes it. */
  private void drop(Held h) {
    if (--h.holders == 0) {
      try {
        h.channel.close();
      } catch (IOException ignored) {
        // read-only: nothing lost
      }
    }
  }
}
