package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ShuffleRead;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;

/**
 * The answers to one TCP connection's SHUFFLE_READs: the window asked for, found and checked
 * ({@link BlockWindow}), sent as a READ's bytes are ({@link ReadAnswers#send}), with the same
 * check after them: a data file that changed while it was sent voids the payload.
 *
 * <p>A map output's files are taken for each request as leases on those the server keeps open
 * between requests, for all its connections ({@link OpenMapOutputs}), and given back after it.
 *
 * <p>Finding a window (its files walked to and opened, its index read and checked, its
 * partitions' checksums read) took longer than sending a 1 MiB block over loopback, and one
 * connection's thread did both in turn, so one stream carried about a third of what a bare
 * sendfile does (docs/benchmarks.md, "Shuffle block windows freed when given back"). So the
 * windows of the requests its connection has read ahead ({@link #findAhead}) are found on a
 * finder thread while the answer before them is sent, one after another, at most
 * {@link #WINDOWS_AHEAD}; each answer still goes out at its turn, in request order, refused
 * there if its find was, and checked after its bytes as before. A found window holds its data
 * file open until answered, or until the connection ends ({@link #close}).
 */
final class ShuffleAnswers {
  /** Requests a connection reads ahead of the answer it is sending, whose windows are found meanwhile. */
  static final int WINDOWS_AHEAD = 3;

  /** A request read ahead, and its window being found. */
  private record Ahead(ShuffleRead request, CompletableFuture<BlockWindow> found) {}

  /** The server as its connections see it. */
  private final ServerContext server;
  private final ReadAnswers reads;
  /** The client checks what it receives: answers carry Spark's checksums where there are any. */
  private final boolean checked;
  /** For the windows found on the connection's thread. */
  private ByteBuffer indexSlice;
  /** For the windows found ahead: one find at a time uses it, each starting when the one before ended. */
  private ByteBuffer aheadSlice;
  /** The windows found ahead, in request order, until answered. */
  private final ArrayDeque<Ahead> ahead = new ArrayDeque<>();
  /** The connection has ended: a find not started is not made. */
  private volatile boolean closed;

  ShuffleAnswers(ServerContext server, ReadAnswers reads, boolean checked) {
    this.server = server;
    this.reads = reads;
    this.checked = checked;
  }

  /**
   * Starts finding the window of {@code r}, a request read ahead of the one being answered, once
   * the windows found ahead before it are; its {@link #answer} takes it. Nothing is started
   * where {@link #WINDOWS_AHEAD} are being found or wait already, or where this server serves
   * no shuffle: its answer then finds it, as it refuses it.
   */
  void findAhead(ShuffleRead r) {
    ShuffleDirectories dirs = server.shuffleDirectories();
    if (dirs == null || ahead.size() >= WINDOWS_AHEAD) {
      return;
    }
    if (aheadSlice == null) {
      aheadSlice = ByteBuffer.allocate(BlockWindow.INDEX_SLICE);
    }
    CompletableFuture<BlockWindow> found = new CompletableFuture<>();
    Runnable find = () -> {
      if (closed) {
        found.completeExceptionally(stopping(r, null));
        return;
      }
      try {
        found.complete(BlockWindow.open(server, r, aheadSlice, checked));
      } catch (Throwable t) {
        found.completeExceptionally(t);
      }
    };
    Runnable start = () -> {
      try {
        dirs.finders().execute(find);
      } catch (RejectedExecutionException e) {
        found.completeExceptionally(stopping(r, e));
      }
    };
    Ahead before = ahead.peekLast();
    if (before == null) {
      start.run();
    } else {
      before.found().whenComplete((w, e) -> start.run());
    }
    ahead.add(new Ahead(r, found));
  }

  /** Sends the answer to {@code r}: its window found ahead, or found now. */
  void answer(ShuffleRead r) throws IOException {
    server.counters().readStarted();
    try (BlockWindow window = window(r)) {
      try {
        reads.send(window.header(), window.range());
      } catch (RequestRefusedException e) {
        throw window.sending(e);
      }
      server.counters().countBytesSent(window.header().length());
    } finally {
      server.counters().readEnded();
    }
  }

  /**
   * The connection has ended: the windows found ahead and not answered are closed, now or when
   * their find ends, and those not started are not found.
   */
  void close() {
    closed = true;
    for (Ahead a : ahead) {
      a.found().thenAccept(BlockWindow::close);
    }
    ahead.clear();
  }

  /** The window of {@code r}: taken from those found ahead when it is the first, else found now. */
  private BlockWindow window(ShuffleRead r) {
    Ahead first = ahead.peekFirst();
    if (first == null || first.request() != r) {
      return BlockWindow.open(server, r, indexSlice(), checked);
    }
    ahead.pollFirst();
    try {
      return first.found().join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw e;
    }
  }

  private RequestRefusedException stopping(ShuffleRead r, Throwable cause) {
    return new RequestRefusedException(ErrorCode.SHUTTING_DOWN, "Cannot serve shuffle block "
        + r.block().name() + " on gpudirect server " + server.address() + ": the server is stopping", cause);
  }

  private ByteBuffer indexSlice() {
    if (indexSlice == null) {
      indexSlice = ByteBuffer.allocate(BlockWindow.INDEX_SLICE);
    }
    return indexSlice;
  }
}
