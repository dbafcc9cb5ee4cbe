package io.gpudirect.client;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.protocol.ShuffleRead;
import io.gpudirect.transport.BlockMemory;
import io.gpudirect.transport.CallerReads;
import io.gpudirect.transport.ChecksumMismatchException;
import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionLostException;
import io.gpudirect.transport.DeviceRegistration;
import io.gpudirect.transport.DrainedBlockMemory;
import io.gpudirect.transport.PayloadMemory;
import io.gpudirect.transport.RequestTimeoutException;
import io.gpudirect.transport.ServerErrorException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads of a byte range, cut into chunks of at most {@link ClientConfig#chunkSize} bytes,
 * each sent on whichever connection has room ({@link StreamQueue}) and pipelined, while a window of
 * {@link ClientConfig#maxBytesInFlight} bytes bounds what is requested but not yet received.
 * Each chunk lands straight in its slice of the destination. A chunk whose connection drops or
 * whose CRC32C does not match is retried (see {@link Retries}); a chunk that gets no answer
 * within {@link ClientConfig#requestTimeout} has its connection aborted and fails its read.
 */
final class ChunkedReads {
  private static final Logger LOG = LoggerFactory.getLogger(ChunkedReads.class);

  private final String serverName;
  private final ClientConfig config;
  private final ConnectionSlots connections;
  private final ClientThreads threads;
  private final Retries retries;
  private final Semaphore window;
  private final StreamQueue<Attempt> queue;
  private final AtomicLong bytesFetched = new AtomicLong();
  private final AtomicLong reads = new AtomicLong();
  private final AtomicLong fetchNanos = new AtomicLong();

  ChunkedReads(String serverName, ClientConfig config, ConnectionSlots connections,
      ClientThreads threads, Retries retries) {
    this.serverName = serverName;
    this.config = config;
    this.connections = connections;
    this.threads = threads;
    this.retries = retries;
    this.window = new Semaphore(config.maxBytesInFlight());
    this.queue = new StreamQueue<>(connections.size(), (long) StreamQueue.DEPTH * config.chunkSize(),
        a -> a.chunk().bytes());
  }

  /** Below this a read is not split further to spread it over the streams: the cost of a request would show. */
  static final int MIN_SPREAD_CHUNK = 1 << 20;

  /** The most one request asks for. */
  int chunkLength() {
    return Math.min(config.chunkSize(), connections.maxReadLength());
  }

  /**
   * How much one request of a read of {@code length} bytes asks for: at most
   * {@link #chunkLength()}, and less where that would not give every stream
   * {@link StreamQueue#DEPTH} chunks of this read alone (not below {@link #MIN_SPREAD_CHUNK}).
   * Then, while a caller has a second read in flight, its chunks wait for whichever stream is
   * free first, and a read waits on its slowest stream for a small chunk, not a large one: with
   * 4 MiB chunks, two 16 MiB reads in flight over 4 streams were all dealt out at once, and the
   * streams that finished first sat idle (docs/benchmarks.md, "A link that is not loopback").
   */
  int chunkLength(long length) {
    long spread = length / ((long) connections.size() * StreamQueue.DEPTH);
    return (int) Math.min(chunkLength(), Math.max(MIN_SPREAD_CHUNK, spread));
  }

  TransferStats stats() {
    return new TransferStats(bytesFetched.get(), reads.get(), fetchNanos.get(), retries.count());
  }

  /**
   * Reads {@code dst.remaining()} bytes into host memory. A caller that waits for a read of one
   * chunk ({@code callerWaits}) reads its answer itself when it can (see
   * {@link Connection#callerReads}): for a small read, that saves waking the connection's
   * reader thread and then this one. With {@code unverifiedCrcs}, each chunk's CRC32C is kept
   * there, unchecked, in chunk order.
   */
  CompletableFuture<Void> readIntoHost(String path, FileVersion version, long offset,
      ByteBuffer dst, boolean callerWaits, int chunk, OptionalInt[] unverifiedCrcs) {
    if (dst.isReadOnly()) {
      throw new IllegalArgumentException("Cannot read '" + path + "' into a read-only buffer");
    }
    int total = dst.remaining();
    ByteBuffer target = dst.slice();
    return readChunks(path, version, offset, total, callerWaits, chunk, (off, len) -> {
      ByteBuffer slice = target.slice(off, len);
      return unverifiedCrcs == null ? new HostTarget(slice)
          : new UnverifiedHostTarget(slice, unverifiedCrcs, off / chunk);
    }).thenApply(v -> {
      dst.position(dst.position() + total);
      return null;
    });
  }

  /**
   * As {@link #readIntoHost}, into memory bound only when its bytes start to arrive (see
   * {@link PayloadMemory}): {@code memory} gives all {@code length} bytes. A read of more than
   * one chunk binds at once, as before: its requests wait on different connections, and reads
   * bound on one connection while their other chunks wait behind unbound ones on another
   * could hold all the memory there is.
   */
  CompletableFuture<Void> readIntoLateHost(String path, FileVersion version, long offset,
      int length, PayloadMemory memory, int chunk, OptionalInt[] unverifiedCrcs) {
    if (length < 0) {
      throw new IllegalArgumentException("Cannot read '" + path + "': negative length " + length);
    }
    if (length > chunk) {
      return readIntoHost(path, version, offset, memory.bind(), false, chunk, unverifiedCrcs);
    }
    return readChunks(path, version, offset, length, false, chunk, (off, len) ->
        unverifiedCrcs == null ? new LateHostTarget(memory)
            : new LateUnverifiedHostTarget(memory, unverifiedCrcs, 0));
  }

  /** Where the chunk at {@code off} ({@code len} bytes) of a read lands. */
  private interface Targets {
    Target at(int off, int len);
  }

  private CompletableFuture<Void> readChunks(String path, FileVersion version, long offset,
      int total, boolean callerWaits, int chunk, Targets targets) {
    checkRead(path, version, offset);
    long start = System.nanoTime();
    List<CompletableFuture<Void>> parts = new ArrayList<>();
    AtomicBoolean failed = new AtomicBoolean();
    int off = 0;
    do {
      int len = Math.min(chunk, total - off);
      CompletableFuture<Void> part = admit(path, len, failed, parts);
      if (part == null) {
        break;
      }
      sendChunk(new Chunk(path, version, offset + off, len, targets.at(off, len), part, failed), 0,
          callerWaits && len == total);
      off += len;
    } while (off < total && !failed.get());

    return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]))
        .handle((v, err) -> {
          settled(start, parts, err, total);
          return null;
        });
  }

  /**
   * Reads {@code dst.remaining()} bytes into host memory for a caller that waits: as
   * {@link #readIntoHost} with {@code callerWaits}, joined. A read of one chunk, the usual small
   * read, goes without the futures that gather a read's chunks (its one chunk's future is the
   * read's); where the caller reads its answer itself, nothing of it runs on another thread.
   * Failures are thrown as {@link CompletionException}s, as a join throws them.
   */
  void readWaiting(String path, FileVersion version, long offset, ByteBuffer dst) {
    int total = dst.remaining();
    int chunk = chunkLength(total);
    if (total > chunk || total == 0) {
      readIntoHost(path, version, offset, dst, true, chunk, null).join();
      return;
    }
    if (dst.isReadOnly()) {
      throw new IllegalArgumentException("Cannot read '" + path + "' into a read-only buffer");
    }
    checkRead(path, version, offset);
    long start = System.nanoTime();
    try {
      window.acquire(total);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CompletionException(interrupted(path, e));
    }
    CompletableFuture<Void> done = new CompletableFuture<>();
    try {
      sendChunk(new Chunk(path, version, offset, total, new HostTarget(dst.slice()), done,
          new AtomicBoolean()), 0, true, start);
      done.join();
    } catch (CompletionException e) {
      throw new CompletionException(Failures.unwrap(e));
    } finally {
      window.release(total);
      reads.incrementAndGet();
      fetchNanos.addAndGet(System.nanoTime() - start);
    }
    bytesFetched.addAndGet(total);
    dst.position(dst.position() + total);
  }

  /** Reads {@code length} bytes into registered device memory at {@code address}, in the registration's pieces. */
  CompletableFuture<Void> readIntoDevice(String path, FileVersion version, long offset,
      DeviceRegistration range, long address, long length) {
    long start = System.nanoTime();
    List<CompletableFuture<Void>> parts = new ArrayList<>();
    AtomicBoolean failed = new AtomicBoolean();
    int chunk = chunkLength();
    for (long[] piece : range.pieces(address, length, chunk)) {
      if (failed.get()) {
        break;
      }
      int len = (int) piece[1];
      CompletableFuture<Void> part = admit(path, len, failed, parts);
      if (part == null) {
        break;
      }
      sendChunk(new Chunk(path, version, offset + (piece[0] - address), len,
          new DeviceTarget(range, piece[0]), part, failed), 0, false);
    }
    return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]))
        .handle((v, err) -> {
          settled(start, parts, err, length);
          return null;
        });
  }

  /**
   * Reads shuffle block {@code block} into the memory {@code memory} binds for each of its
   * windows: the first, of up to the server's maxReadLength (over RDMA, or for memory that
   * drains each window as it arrives ({@link DrainedBlockMemory}), a chunk: see
   * {@link io.gpudirect.transport.Transport#blockWindow}), tells the block's length and its
   * data file's version; any further windows follow, on whichever streams have room, naming that
   * version, so that a map output written again meanwhile fails the read rather than mixing two
   * versions. Each window is a request of its own, retried and timed out as a chunk is, and
   * checked as it arrives (its CRC32C, or Spark's checksums of the partitions it holds: those
   * crossing into other windows are checked once all are in, see {@link CrossingPartitions}). The
   * window of bytes in flight ({@link ClientConfig#maxBytesInFlight}) is not taken: a block's
   * length is unknown before its answer, and the fetcher that asks for blocks bounds them with
   * the limits of its own (Spark's). Completes with the block's length.
   */
  CompletableFuture<Long> readBlock(ShuffleBlockId block, long expectedLength, BlockMemory memory) {
    connections.checkOpen();
    long start = System.nanoTime();
    int window = memory instanceof DrainedBlockMemory ? chunkLength()
        : connections.transport().blockWindow(connections.maxReadLength(), chunkLength());
    AtomicBoolean failed = new AtomicBoolean();
    AtomicReference<ShuffleData> first = new AtomicReference<>();
    CrossingPartitions crossing = new CrossingPartitions(block, serverName);
    List<CompletableFuture<Void>> parts = new ArrayList<>();
    parts.add(sendWindow(block, FileVersion.ANY, expectedLength, false, 0, window, memory, first, crossing,
        failed));
    return parts.get(0).thenComposeAsync(v -> {
      ShuffleData answer = first.get();
      for (long off = window; off < answer.blockLength(); off += window) {
        parts.add(sendWindow(block, answer.version(), answer.blockLength(), true, off, window, memory,
            new AtomicReference<>(), crossing, failed));
      }
      return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]))
          .thenRun(crossing::check);
    }, threads::runWorker).handle((v, err) -> {
      settled(start, parts, err, err == null ? first.get().blockLength() : 0);
      return first.get().blockLength();
    });
  }

  /**
   * One window of a block, from {@code offset} within it, of a block of {@code blockLength} bytes
   * as the first window said ({@code known}), or as its map status says for the first (-1 where
   * unknown); {@code answer} gets its header.
   */
  private CompletableFuture<Void> sendWindow(ShuffleBlockId block, FileVersion version,
      long blockLength, boolean known, long offset, int window, BlockMemory memory,
      AtomicReference<ShuffleData> answer, CrossingPartitions crossing, AtomicBoolean failed) {
    CompletableFuture<Void> part = new CompletableFuture<>();
    part.whenComplete((v, err) -> {
      if (err != null) {
        failed.set(true);
      }
    });
    sendChunk(new Chunk(block.name(), version, offset, window,
        new BlockTarget(block, known ? blockLength : -1, blockLength, memory, answer, crossing), part, failed),
        0, false);
    return part;
  }

  private void checkRead(String path, FileVersion version, long offset) {
    connections.checkOpen();
    if (path == null || version == null) {
      throw new IllegalArgumentException("path and version must not be null");
    }
    if (offset < 0) {
      throw new IllegalArgumentException("Cannot read '" + path + "' from gpudirect server "
          + serverName + ": negative offset " + offset);
    }
  }

  /**
   * One request of a read; {@code readFailed} is set once any chunk of the same read failed. A
   * window of a shuffle block (a {@link BlockTarget}) has the block's name as its path, its
   * offset within the block, and the most it may be as its length.
   */
  private record Chunk(String path, FileVersion version, long offset, int length, Target target,
      CompletableFuture<Void> done, AtomicBoolean readFailed) {
    /**
     * What it weighs in its stream's queue ({@link StreamQueue}): its length; for a window of a
     * block, the part of the block it will carry, as far as known (the length its map status
     * gave, for a first window), since a window's length is only the most it may be.
     */
    long bytes() {
      if (target instanceof BlockTarget b && b.expectedLength() >= 0) {
        return Math.max(1, Math.min(length, b.expectedLength() - offset));
      }
      return length;
    }

    /** The action as a user would say it, for errors. */
    String what() {
      return target instanceof BlockTarget ? "fetch shuffle block " + path
          + (offset == 0 ? "" : " from byte " + offset)
          : "read '" + path + "' at offset " + offset + " (" + length + " bytes)";
    }
  }

  /** No clock read yet: {@link #sendChunk} reads it if it needs it. */
  private static final long NOT_TIMED = Long.MIN_VALUE;

  /**
   * Where a chunk lands, and how a connection puts it there. {@code request} is the chunk as a
   * READ names it: its id, path, version and range (a shuffle window's target sends its own
   * request with these).
   */
  private interface Target {
    /** {@code callerReads}: the calling thread reads the answer itself (a hint). */
    CompletableFuture<Void> read(Connection conn, ReadRequest request, boolean callerReads);
  }

  /**
   * A window of a shuffle block, into memory bound when its answer tells its length; the
   * answer's header is kept in {@code answer}. A window after the first must find the block as
   * long as the first did ({@code blockLength}): the same data file with an index written again
   * may place the block elsewhere.
   */
  private record BlockTarget(ShuffleBlockId block, long blockLength, long expectedLength, BlockMemory memory,
      AtomicReference<ShuffleData> answer, CrossingPartitions crossing) implements Target {
    @Override
    public CompletableFuture<Void> read(Connection conn, ReadRequest request, boolean callerReads) {
      return conn.readBlock(new ShuffleRead(request.requestId(), block, request.offset(),
          request.length(), request.version()), memory).thenAccept(received -> {
            ShuffleData a = received.header();
            if (blockLength >= 0 && a.blockLength() != blockLength) {
              throw new ServerErrorException(ErrorCode.FILE_CHANGED, "Shuffle block " + block.name()
                  + " (" + block.describe() + ") was " + blockLength + " bytes long at its first"
                  + " window and " + a.blockLength() + " at the window from byte " + a.offset()
                  + ": its map output was written again meanwhile");
            }
            answer.set(a);
            crossing.add(received.pieces());
            if (memory instanceof DrainedBlockMemory drained) {
              drained.drain(a);
            }
          });
    }
  }

  /** Host memory: any transport reads into it (again from the start on a retry). */
  private record HostTarget(ByteBuffer dst) implements Target {
    @Override
    public CompletableFuture<Void> read(Connection conn, ReadRequest request, boolean callerReads) {
      dst.clear();
      Optional<CallerReads> caller = callerReads ? conn.callerReads() : Optional.empty();
      return caller.isPresent() ? caller.get().readForCaller(request, dst) : conn.read(request, dst);
    }
  }

  /** Host memory whose CRC32C is left to the caller: kept in {@code crcs[index]}. */
  private record UnverifiedHostTarget(ByteBuffer dst, OptionalInt[] crcs, int index) implements Target {
    @Override
    public CompletableFuture<Void> read(Connection conn, ReadRequest request, boolean callerReads) {
      dst.clear();
      return conn.readUnverified(request, dst).thenAccept(crc -> crcs[index] = crc);
    }
  }

  /** Host memory bound when the chunk's bytes start to arrive, again on a retry (the same memory). */
  private record LateHostTarget(PayloadMemory dst) implements Target {
    @Override
    public CompletableFuture<Void> read(Connection conn, ReadRequest request, boolean callerReads) {
      return conn.read(request, dst);
    }
  }

  /** As {@link LateHostTarget}, the CRC32C left to the caller: kept in {@code crcs[index]}. */
  private record LateUnverifiedHostTarget(PayloadMemory dst, OptionalInt[] crcs, int index)
      implements Target {
    @Override
    public CompletableFuture<Void> read(Connection conn, ReadRequest request, boolean callerReads) {
      return conn.readUnverified(request, dst).thenAccept(crc -> crcs[index] = crc);
    }
  }

  /** Registered device memory: the server writes at {@code address}. */
  private record DeviceTarget(DeviceRegistration range, long address) implements Target {
    @Override
    public CompletableFuture<Void> read(Connection conn, ReadRequest request, boolean callerReads) {
      return conn.deviceReads()
          .orElseThrow(() -> new GpuDirectException("a device read needs an RDMA connection, got " + conn))
          .readInto(request, range, address);
    }
  }

  /**
   * Sends one chunk on the freest stream, or leaves it waiting for one (see {@link StreamQueue}).
   * With {@code callerReads}, where it goes out at once, the calling thread then reads answers
   * on that connection until this chunk's has arrived, where the connection lets it ({@link
   * Connection#callerReads}) and no one else is reading them (first try only; a retry goes out
   * from a worker and the caller waits as for any read). A chunk whose answer the caller has
   * read is settled right there, on this thread: its timeout was kept by the connection (see
   * {@link CallerReads#readAnswersUntil(CompletableFuture, long)}), so no timer task is
   * scheduled and cancelled for it, and no callback chained.
   */
  private void sendChunk(Chunk c, int attempt, boolean callerReads) {
    sendChunk(c, attempt, callerReads, NOT_TIMED);
  }

  /** As above; {@code nowNanos}: {@link System#nanoTime} read just before, or NOT_TIMED. */
  private void sendChunk(Chunk c, int attempt, boolean callerReads, long nowNanos) {
    if (connections.isClosed()) {
      c.done.completeExceptionally(connections.closedError());
      return;
    }
    if (c.readFailed().get()) {
      c.done.completeExceptionally(notRead(c));
      return;
    }
    int stream = queue.claim(new Attempt(c, attempt));
    if (stream >= 0) {
      sendOn(stream, c, attempt, callerReads, nowNanos);
    }
  }

  /** A chunk waiting for a stream, and which try it is. */
  private record Attempt(Chunk chunk, int attempt) {}

  /** Sends a chunk on {@code stream}, which has counted it outstanding until it completes. */
  private void sendOn(int stream, Chunk c, int attempt, boolean callerReads, long nowNanos) {
    if (connections.isClosed()) {
      finished(stream, c);
      c.done.completeExceptionally(connections.closedError());
      return;
    }
    Connection conn;
    try {
      conn = connections.connection(stream);
    } catch (RuntimeException e) {
      finished(stream, c);
      retryOrFail(c, attempt, e);
      return;
    }
    ReadRequest request = new ReadRequest(connections.nextRequestId(), c.path, c.version, c.offset,
        c.length);
    CompletableFuture<Void> f;
    try {
      f = c.target.read(conn, request, callerReads);
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    CallerReads caller = callerReads ? conn.callerReads().orElse(null) : null;
    if (caller != null) {
      long deadline = (nowNanos != NOT_TIMED ? nowNanos : System.nanoTime())
          + config.requestTimeout().toNanos();
      caller.readAnswersUntil(f, deadline);
      if (f.isDone()) {
        Throwable err = f.isCompletedExceptionally() ? f.handle((v, e) -> e).join() : null;
        settle(stream, c, attempt, conn, request, err,
            err != null && System.nanoTime() - deadline >= 0);
        return;
      }
    }
    CompletableFuture<Void> pendingRead = f;
    AtomicBoolean timedOut = new AtomicBoolean();
    ScheduledFuture<?> timeout = threads.schedule(() -> {
      if (!pendingRead.isDone()) {
        timedOut.set(true);
        conn.abort(timedOut(request));
      }
    }, config.requestTimeout().toNanos());
    f.whenComplete((v, err) -> {
      if (timeout != null) {
        timeout.cancel(false);
      }
      settle(stream, c, attempt, conn, request, err, timedOut.get());
    });
  }

  private ConnectionLostException timedOut(ReadRequest request) {
    return new ConnectionLostException("Connection to gpudirect server " + serverName
        + " closed: request " + request.requestId() + " timed out", null);
  }

  /**
   * A chunk's read on {@code stream} has ended: done, or failed and retried, or failed for
   * good; the stream takes its next chunk.
   */
  private void settle(int stream, Chunk c, int attempt, Connection conn, ReadRequest request,
      Throwable err, boolean timedOut) {
    Throwable cause = err == null ? null : Failures.unwrap(err);
    if (cause instanceof ChecksumMismatchException) {
      // Before the stream takes its next chunk, so that it goes over a new connection.
      connections.retire(conn);
    }
    if (err == null) {
      // The stream's next chunk goes out before this one's reader hears of it.
      finished(stream, c);
      c.done.complete(null);
      return;
    }
    // A failure is settled first, so that the stream does not take the next chunk of a read
    // that has just failed.
    if (timedOut) {
      c.done.completeExceptionally(new RequestTimeoutException(c.target instanceof BlockTarget
          ? "Cannot " + c.what() + " on gpudirect server " + serverName + ": it timed out after "
              + config.requestTimeout()
          : "Reading '" + c.path + "' at offset " + c.offset + " (" + request.length()
              + " bytes) from gpudirect server " + serverName + " timed out after "
              + config.requestTimeout()));
    } else {
      retryOrFail(c, attempt, cause);
    }
    finished(stream, c);
  }

  /**
   * {@code stream} is done with {@code done}: the chunks that waited longest go out, as many as
   * the streams now have room for, from this thread (usually a connection's reader: one small
   * write each) where their stream's connection is open, else from a worker, since connecting
   * must not hold up a reader or the timer.
   */
  private void finished(int stream, Chunk done) {
    queue.finished(stream, new Attempt(done, 0));
    for (StreamQueue.Assignment<Attempt> a; (a = queue.nextToSend()) != null; ) {
      Chunk c = a.task().chunk();
      if (connections.isClosed() || c.readFailed().get()) {
        // A chunk of a read that has already failed is not sent: against a stalled server it
        // would only wait out a request timeout of its own before the caller hears of the failure.
        queue.finished(a.stream(), a.task());
        c.done.completeExceptionally(connections.isClosed() ? connections.closedError() : notRead(c));
        continue;
      }
      StreamQueue.Assignment<Attempt> next = a;
      if (connections.isLive(next.stream())) {
        sendOn(next.stream(), c, next.task().attempt(), false, NOT_TIMED);
      } else {
        threads.runWorker(() -> sendOn(next.stream(), c, next.task().attempt(), false, NOT_TIMED));
      }
    }
  }

  private GpuDirectException interrupted(String path, InterruptedException e) {
    return new GpuDirectException("Interrupted while reading '" + path + "' from gpudirect server "
        + serverName, e);
  }

  private GpuDirectException notRead(Chunk c) {
    return new NotRead("Not read: another part of the read of '" + c.path + "' from gpudirect server "
        + serverName + " failed");
  }

  /** A chunk left unsent because another chunk of its read had failed: never a read's reason. */
  private static final class NotRead extends GpuDirectException {
    NotRead(String message) {
      super(message);
    }
  }

  /**
   * Counts a read whose parts are all settled: its time whatever the outcome, its {@code bytes}
   * when it succeeded; when it failed, throws why ({@link #readFailure}).
   */
  private void settled(long start, List<CompletableFuture<Void>> parts, Throwable err, long bytes) {
    reads.incrementAndGet();
    fetchNanos.addAndGet(System.nanoTime() - start);
    if (err != null) {
      throw new CompletionException(readFailure(parts, err));
    }
    bytesFetched.addAndGet(bytes);
  }

  /**
   * Why a read failed: its first failed chunk in file order (deterministic, and usually the
   * root cause), passing over chunks left unsent because of another's failure, which may have
   * been settled before the failure that caused them.
   */
  private static Throwable readFailure(List<CompletableFuture<Void>> parts, Throwable err) {
    Throwable first = null;
    for (CompletableFuture<Void> part : parts) {
      if (part.isCompletedExceptionally()) {
        Throwable t = Failures.unwrap(part.handle((x, e) -> e).join());
        if (!(t instanceof NotRead)) {
          return t;
        }
        first = first == null ? t : first;
      }
    }
    return first != null ? first : Failures.unwrap(err);
  }

  private void retryOrFail(Chunk c, int attempt, Throwable err) {
    // Once another chunk of the read has failed for good, the read fails: retrying this one
    // would only make the caller wait longer for that failure (a stalled server would make it
    // wait a request timeout per retry).
    if (retries.allowAfter(attempt, err) && !connections.isClosed() && !c.readFailed().get()) {
      long delay = retries.next(attempt);
      LOG.debug("Retrying '{}' at offset {} from {} in {} ms: {}", c.path, c.offset, serverName,
          TimeUnit.NANOSECONDS.toMillis(delay), err.getMessage());
      ScheduledFuture<?> s = threads.schedule(
          () -> threads.runWorker(() -> sendChunk(c, attempt + 1, false)), delay);
      if (s == null) {
        c.done.completeExceptionally(connections.closedError());
      }
      return;
    }
    c.done.completeExceptionally(Failures.finalError(serverName, err, c.path, c.version, c.what(),
        attempt + 1));
  }

  /**
   * The future of one chunk of a read, added to {@code parts}; it holds {@code len} bytes of the
   * bytes-in-flight window until it completes, and a failure marks the whole read failed. Null
   * when interrupted while waiting for the window (the failed future is in {@code parts}).
   */
  private CompletableFuture<Void> admit(String path, int len, AtomicBoolean failed,
      List<CompletableFuture<Void>> parts) {
    CompletableFuture<Void> part = new CompletableFuture<>();
    parts.add(part);
    try {
      window.acquire(len);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      part.completeExceptionally(interrupted(path, e));
      return null;
    }
    part.whenComplete((v, err) -> {
      window.release(len);
      if (err != null) {
        failed.set(true);
      }
    });
    return part;
  }
}
