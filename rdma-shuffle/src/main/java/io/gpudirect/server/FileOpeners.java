package io.gpudirect.server;

import io.gpudirect.DaemonThreads;
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
 * <p>How: each open runs on an opener thread while the requesting thread waits (a walk that
 * finds everything it needs open already, as a connection's walks mostly do, never comes here).
 * Once an open has been blocked for {@link #RELEASE_AFTER_NANOS}, the waiting thread looks at
 * the name and, if it is a FIFO, opens it read-write (on Linux that never blocks, whether or not
 * anyone reads, and it counts as a writer, so the blocked open returns; the walk then finds a
 * FIFO, not a file or directory, and refuses it). That cannot help when the FIFO was renamed away
 * or unlinked in the meantime, or the server may not write to it: after {@link #GIVE_UP_NANOS}
 * the request is refused ({@link LeftBehindException}) and the opener is left behind; what it
 * opens once released is closed, and so is the directory it opened in, which nobody else may
 * close meanwhile (closing a directory stream waits for the opens in it). At most
 * {@link #MAX_LEFT_BEHIND} are left behind; beyond that requests that need an open are refused
 * at once, so that a local user who keeps swapping FIFOs in costs the server a bounded number
 * of threads, never its connections.
 */
final class FileOpeners implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FileOpeners.class);
  static final long RELEASE_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
  static final long GIVE_UP_NANOS = TimeUnit.SECONDS.toNanos(2);
  static final int MAX_LEFT_BEHIND = 64;

  /** An open call: openat of a directory or a file, relative to an open directory. */
  interface OpenCall<R extends AutoCloseable> {
    R open() throws IOException;
  }

  /**
   * An open given up on: the directory it was made in now belongs to the opener, which closes
   * it (unless it is the root) once the open returns; the walk must neither close nor use it.
   */
  static final class LeftBehindException extends RequestRefusedException {
    LeftBehindException(String message) {
      super(ErrorCode.IO_ERROR, message);
    }
  }

  private final String name;
  private final ExecutorService threads;
  private final AtomicInteger leftBehind = new AtomicInteger();
  private final AtomicLong released = new AtomicLong();

  FileOpeners(String name) {
    this.name = name;
    // Unbounded on purpose: each connection (its thread, and its finder: ShuffleAnswers) and each
    // RDMA queue pair waits for one open at a time, so the threads working are bounded by the
    // connections; those left behind are
    // bounded by MAX_LEFT_BEHIND.
    this.threads = Executors.newCachedThreadPool(DaemonThreads.numbered("gpudirect-server-open-" + name));
  }

  /**
   * Runs {@code call}, an open of {@code file} in {@code dir}, on an opener thread and returns
   * what it opened, or throws what it threw. {@code dirIsRoot}: the root is never closed here.
   */
  <R extends AutoCloseable> R open(String requested, SecureDirectoryStream<Path> dir, Path file,
      boolean dirIsRoot, OpenCall<R> call) throws IOException {
    if (leftBehind.get() >= MAX_LEFT_BEHIND) {
      throw new RequestRefusedException(ErrorCode.IO_ERROR, "Cannot open "
          + RootDirectory.show(requested) + ": " + leftBehind.get() + " opens below the root of"
          + " this server are blocked (FIFOs swapped in for files or directories below the root?"
          + " see docs/security.md); refusing opens until they end");
    }
    Attempt<R> attempt = new Attempt<>(call, dirIsRoot ? null : dir);
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
          long blockedFor = attempt.runningFor();
          if (blockedFor >= GIVE_UP_NANOS && attempt.leaveBehind()) {
            LOG.warn("Gave up on opening {} below root {} of the server after {} ms ({} left"
                + " behind); was a FIFO swapped in for it?", file, name,
                TimeUnit.NANOSECONDS.toMillis(blockedFor), leftBehind.get());
            throw new LeftBehindException("Cannot open " + RootDirectory.show(requested)
                + ": opening it did not end in " + TimeUnit.NANOSECONDS.toMillis(GIVE_UP_NANOS)
                + " ms (a FIFO swapped in below the root while it was being opened?); refused");
          }
          release(dir, file);
        }
      }
    } catch (ExecutionException e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      throw new IllegalStateException("open below the root failed", e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      if (attempt.leaveBehind()) {
        throw new LeftBehindException("Opening " + RootDirectory.show(requested)
            + " was interrupted: the server is stopping");
      }
      throw new RequestRefusedException(ErrorCode.SHUTTING_DOWN,
          "Opening " + RootDirectory.show(requested) + " was interrupted: the server is stopping");
    }
  }

  /**
   * If {@code file} in {@code dir} is a FIFO, opens it read-write and closes it: a reader
   * blocked on it gets its writer and returns. Opening read-write never blocks on Linux, and no
   * byte is written. Anything else (a file, a directory, a link, nothing) is left alone.
   */
  private void release(SecureDirectoryStream<Path> dir, Path file) {
    try {
      BasicFileAttributes a = dir.getFileAttributeView(file, BasicFileAttributeView.class,
          LinkOption.NOFOLLOW_LINKS).readAttributes();
      if (!a.isOther()) {
        return;
      }
      try (SeekableByteChannel writer = dir.newByteChannel(file, Set.of(
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

  private final class Attempt<R extends AutoCloseable> extends FutureTask<R> {
    /** The directory the open is made in, closed after a left-behind open; null for the root. */
    private final SecureDirectoryStream<Path> dir;
    private boolean abandoned;
    private boolean finished;
    /** When an opener thread took it up; 0 until then. */
    private volatile long startedAt;

    Attempt(OpenCall<R> call, SecureDirectoryStream<Path> dir) {
      super(call::open);
      this.dir = dir;
    }

    @Override
    public void run() {
      startedAt = System.nanoTime();
      super.run();
    }

    /**
     * How long the open has been in {@code open(2)}, or 0 while it waits for its thread: on a
     * loaded machine a new opener thread can take seconds to be scheduled, and that is no FIFO
     * (the full suite on a 2-core machine at load 20 refused a plain file that way).
     */
    long runningFor() {
      long started = startedAt;
      return started == 0 ? 0 : System.nanoTime() - started;
    }

    /** The requester stops waiting; true unless the open has just ended (then use it). */
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
      boolean cleanUp;
      synchronized (this) {
        finished = true;
        cleanUp = abandoned;
      }
      if (cleanUp) {
        leftBehind.decrementAndGet();
        try {
          if (!isCancelled()) {
            get().close();
          }
        } catch (Exception ignored) {
          // the open failed: nothing is left open
        }
        if (dir != null) {
          try {
            dir.close();
          } catch (IOException ignored) {
            // nothing left to do
          }
        }
      }
    }
  }
}
