package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import java.io.IOException;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.ClosedDirectoryStreamException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The threads that open directories and files below the root, so that no connection thread
 * ever waits in {@code open(2)} for longer than {@link #GIVE_UP_NANOS}.
 *
 * <p>Why: {@code open} of a FIFO for reading blocks until a writer opens it, and Java cannot
 * pass {@code O_NONBLOCK} (nor {@code O_DIRECTORY}, so opening a directory blocks the same way).
 * A name checked to be a regular file or a directory can be replaced by a FIFO before it is
 * opened, by anyone who may rename entries below the root; were the open on the connection's
 * thread, that connection would hang, and the requests pipelined behind it with it.
 *
 * <p>How: a request's whole walk runs on an opener thread while its connection thread waits.
 * Every open the walk makes is announced ({@link Walk#open}); once one has been blocked for
 * {@link #RELEASE_AFTER_NANOS}, the waiting thread looks at the name and, if it is a FIFO, opens
 * it read-write (on Linux that never blocks, whether or not anyone reads, and it counts as a
 * writer, so the blocked open returns; the walk then finds a FIFO, not a file, and refuses it).
 * That cannot help when the FIFO was renamed away or unlinked in the meantime, or the server may
 * not write to it: after {@link #GIVE_UP_NANOS} the request is refused, and the opener is left
 * behind (what it opens once released is closed). At most {@link #MAX_LEFT_BEHIND} are left
 * behind; beyond that requests that need an open are refused at once, so that a local user who
 * keeps swapping FIFOs in costs the server a bounded number of threads, never its connections.
 */
final class FileOpeners implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FileOpeners.class);
  static final long RELEASE_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
  static final long GIVE_UP_NANOS = TimeUnit.SECONDS.toNanos(2);
  static final int MAX_LEFT_BEHIND = 64;

  /** A walk below the root, run on an opener thread; it opens only through {@link #open}. */
  interface Walk<T> {
    T run(Opens opens);
  }

  /** An open call of a walk: openat of a directory or a file, relative to an open directory. */
  interface OpenCall<R> {
    R open() throws IOException;
  }

  private final String name;
  private final ExecutorService threads;
  private final AtomicInteger leftBehind = new AtomicInteger();
  private final AtomicLong released = new AtomicLong();

  FileOpeners(String name) {
    this.name = name;
    AtomicInteger ids = new AtomicInteger();
    // Unbounded on purpose: each connection (and each RDMA queue pair) waits for one walk at a
    // time, so the threads working are bounded by the connections; those left behind are
    // bounded by MAX_LEFT_BEHIND.
    this.threads = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "gpudirect-server-open-" + name + "-" + ids.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Runs {@code walk} on an opener thread and returns what it returns, or throws what it threw.
   * A result still open when the request has been given up on is closed by the opener.
   */
  <T> T run(String requested, Walk<T> walk) {
    if (leftBehind.get() >= MAX_LEFT_BEHIND) {
      throw new RequestRefusedException(ErrorCode.IO_ERROR, "Cannot open "
          + RootDirectory.show(requested) + ": " + leftBehind.get() + " opens below the root of"
          + " this server are blocked (FIFOs swapped in for files or directories below the root?"
          + " see docs/security.md); refusing opens until they end");
    }
    Opens opens = new Opens();
    Attempt<T> attempt = new Attempt<>(walk, opens);
    try {
      threads.execute(attempt);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      throw new RequestRefusedException(ErrorCode.SHUTTING_DOWN,
          "Cannot open " + RootDirectory.show(requested) + ": the server is stopping", e);
    }
    try {
      while (true) {
        try {
          return attempt.get(RELEASE_AFTER_NANOS, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
          Blocked b = opens.blocked;
          long blockedFor = b == null ? 0 : System.nanoTime() - b.since;
          if (blockedFor >= GIVE_UP_NANOS && attempt.leaveBehind()) {
            LOG.warn("Gave up on opening {} below root of server {} after {} ms ({} left behind);"
                + " was a FIFO swapped in for it?", b.name, name,
                TimeUnit.NANOSECONDS.toMillis(blockedFor), leftBehind.get());
            throw new RequestRefusedException(ErrorCode.IO_ERROR, "Cannot open "
                + RootDirectory.show(requested) + ": opening it did not end in "
                + TimeUnit.NANOSECONDS.toMillis(GIVE_UP_NANOS) + " ms (a FIFO swapped in below"
                + " the root while it was being opened?); refused");
          }
          if (b != null && blockedFor >= RELEASE_AFTER_NANOS) {
            release(b);
          }
        }
      }
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      throw new IllegalStateException("walk below the root failed", e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      attempt.leaveBehind();
      throw new RequestRefusedException(ErrorCode.SHUTTING_DOWN,
          "Opening " + RootDirectory.show(requested) + " was interrupted: the server is stopping");
    }
  }

  /**
   * If {@code b}'s name is a FIFO, opens it read-write and closes it: the blocked reader gets
   * its writer and returns. Opening read-write never blocks on Linux, and no byte is written.
   * Anything else (a file, a directory, a link, nothing) is left alone.
   */
  private void release(Blocked b) {
    try {
      BasicFileAttributes a = b.dir.getFileAttributeView(b.name, BasicFileAttributeView.class,
          LinkOption.NOFOLLOW_LINKS).readAttributes();
      if (!a.isOther()) {
        return;
      }
      try (SeekableByteChannel writer = b.dir.newByteChannel(b.name, Set.of(
          StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS))) {
        released.incrementAndGet();
      }
    } catch (IOException | ClosedDirectoryStreamException | UnsupportedOperationException e) {
      // Not ours to open, or gone: the give-up deadline stands.
    }
  }

  /** Opens below the root that were blocked and got released here (for tests). */
  long released() {
    return released.get();
  }

  /** Openers left blocked in an open that has not returned yet (for tests). */
  int leftBehind() {
    return leftBehind.get();
  }

  @Override
  public void close() {
    // Threads blocked in open(2) cannot be interrupted; they are daemons and end with the JVM.
    threads.shutdownNow();
  }

  /** Where a walk is blocked, if it is: one open, of {@code name} in {@code dir}. */
  private record Blocked(SecureDirectoryStream<Path> dir, Path name, long since) {}

  /** The opens of one walk, announced so that a blocked one can be found and released. */
  static final class Opens {
    private volatile Blocked blocked;

    /** Calls {@code call}, an open of {@code name} relative to {@code dir}. */
    <R> R open(SecureDirectoryStream<Path> dir, Path name, OpenCall<R> call) throws IOException {
      blocked = new Blocked(dir, name, System.nanoTime());
      try {
        return call.open();
      } finally {
        blocked = null;
      }
    }
  }

  private final class Attempt<T> extends FutureTask<T> {
    private boolean abandoned;
    private boolean finished;

    Attempt(Walk<T> walk, Opens opens) {
      super(() -> walk.run(opens));
    }

    /** The requester stops waiting; true unless the walk has just finished (then use it). */
    synchronized boolean leaveBehind() {
      if (finished) {
        return false;
      }
      abandoned = true;
      leftBehind.incrementAndGet();
      return true;
    }

    @Override
    protected void done() {
      boolean closeResult;
      synchronized (this) {
        finished = true;
        closeResult = abandoned;
      }
      if (closeResult) {
        leftBehind.decrementAndGet();
        try {
          if (!isCancelled() && get() instanceof AutoCloseable c) {
            c.close();
          }
        } catch (Exception ignored) {
          // the walk failed, or its result is closed already: nothing is left open
        }
      }
    }
  }
}
