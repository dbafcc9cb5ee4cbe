package io.gpudirect.client;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.Crc32cCombine;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.FileMeta;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.ListRequest;
import io.gpudirect.protocol.ListResponse;
import io.gpudirect.protocol.ListingOrder;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.StatRequest;
import io.gpudirect.protocol.StatResponse;
import io.gpudirect.transport.ChecksumMismatchException;
import io.gpudirect.transport.ConnectFailedException;
import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionLostException;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.RequestTimeoutException;
import io.gpudirect.transport.ServerErrorException;
import io.gpudirect.transport.Transport;
import io.gpudirect.transport.TransportException;
import io.gpudirect.transport.rdma.RdmaConnection;
import io.gpudirect.transport.rdma.RdmaTransport;
import io.gpudirect.transport.rdma.RegisteredRange;
import io.gpudirect.verbs.RdmaException;
import io.gpudirect.verbs.RdmaUnavailableException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link RemoteStore} over gpudirect's own protocol. Holds {@code streams} connections to one
 * server. A read is split into chunks of at most {@code chunkSize} bytes, spread round-robin
 * over the connections and pipelined, while a window of {@code maxBytesInFlight} bytes bounds
 * what is requested but not yet received. Each chunk lands straight in its slice of the
 * caller's buffer.
 *
 * <p>Reads are idempotent, so a chunk whose connection drops or whose CRC32C does not match
 * is retried (new connection, exponential backoff) up to {@code maxRetries} times. A chunk
 * that times out fails its read with {@link RequestTimeoutException}. Server refusals become
 * {@link RemoteFileException}s and are not retried. Every chunk names the file version the
 * caller read from STAT or LIST, retries included, so a file that changes during a read fails
 * it with {@link FileChangedException} (never bytes of both versions, never a retry into
 * success).
 */
public final class BlockClient implements RemoteStore {
  private static final Logger LOG = LoggerFactory.getLogger(BlockClient.class);

  private final InetSocketAddress server;
  private final String serverName;
  private final ClientConfig config;
  /** RDMA or TCP; set once in {@link #connect}, before any read (a fallback may replace it there). */
  private volatile Transport transport;
  private volatile String transportReason;
  private final Transport fallback;
  /** Registered device ranges, reused by later device reads; see {@link #readIntoDevice}. */
  private final DeviceRegistrations deviceRegistrations = new DeviceRegistrations(64);
  /** Why device memory cannot take RDMA writes (set once), or null while it can. */
  private volatile String deviceRegistrationFailure;
  /** Built once per client: loading the trusted certificates is not free. */
  private final javax.net.ssl.SSLContext tls;
  private final Connection[] slots;
  /** Connections taken out of service by {@link #retire}, closed later; guarded by {@code slots}. */
  private final java.util.Set<Connection> retired = new java.util.HashSet<>();
  private final Semaphore window;
  private final ScheduledThreadPoolExecutor timer;
  private final ExecutorService workers;
  private final AtomicInteger nextSlot = new AtomicInteger();
  private final AtomicInteger connectionSerial = new AtomicInteger();
  private final AtomicLong requestIds = new AtomicLong();
  private final AtomicLong bytesFetched = new AtomicLong();
  private final AtomicLong reads = new AtomicLong();
  private final AtomicLong fetchNanos = new AtomicLong();
  private final AtomicLong retries = new AtomicLong();
  private volatile boolean closed;

  private BlockClient(InetSocketAddress server, ClientConfig config,
      TransportSelector.Selection selection) {
    this.server = server;
    this.serverName = (server.getAddress() != null ? server.getAddress().getHostAddress()
        : server.getHostString()) + ":" + server.getPort();
    this.config = config;
    this.transport = selection.transport();
    this.transportReason = selection.reason();
    this.fallback = selection.fallback();
    this.tls = config.tls() ? io.gpudirect.tls.TlsContexts.client(config.tlsTrustStore()) : null;
    this.slots = new Connection[config.streams()];
    this.window = new Semaphore(config.maxBytesInFlight());
    this.timer = new ScheduledThreadPoolExecutor(1, daemon("gpudirect-client-timer-" + serverName));
    this.timer.setRemoveOnCancelPolicy(true);
    // Every chunk schedules its timeout here. Whenever the new timeout is the earliest in the
    // queue, the timer thread is woken to wait for it instead: a context switch per chunk,
    // which cost a 4 KiB read 15-50% of its latency (docs/benchmarks.md). A no-op that always
    // comes due sooner than any timeout keeps the head of the queue, so the thread wakes for
    // it alone, at most once a second.
    long tick = Math.min(TimeUnit.SECONDS.toNanos(1), config.requestTimeout().toNanos());
    this.timer.scheduleAtFixedRate(() -> { }, tick, tick, TimeUnit.NANOSECONDS);
    this.workers = Executors.newCachedThreadPool(daemon("gpudirect-client-worker-" + serverName));
  }

  /**
   * Opens {@code config.streams()} connections to {@code server}, retrying with backoff when
   * it cannot be reached. Authentication errors are not retried.
   */
  public static BlockClient connect(InetSocketAddress server, ClientConfig config) {
    return connect(server, config, TransportSelector.of(config.rdmaProvider()));
  }

  /** As {@link #connect(InetSocketAddress, ClientConfig)}, choosing transports with {@code selector}. */
  public static BlockClient connect(InetSocketAddress server, ClientConfig config,
      TransportSelector selector) {
    TransportSelector.Selection selection = selector.choose(config.transport());
    BlockClient client = new BlockClient(server, config, selection);
    try {
      try {
        client.slots[0] = client.openWithRetry();
      } catch (RdmaUnavailableException | RdmaException e) {
        if (client.fallback == null) {
          throw e;
        }
        // transport=auto: this server cannot do RDMA with us; TCP it is, and we say why.
        client.transport = client.fallback;
        client.transportReason = "transport=auto chose TCP: " + (e instanceof RdmaUnavailableException u
            ? u.reason() : "RDMA to gpudirect server " + client.serverName + " failed: " + e.getMessage());
        TransportSelector.logOnce(client.transportReason);
        client.slots[0] = client.openWithRetry();
      }
      for (int i = 1; i < client.slots.length; i++) {
        client.slots[i] = client.openWithRetry();
      }
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
    // Over TCP every ls, cat and scan connects: the transport line (TcpFallbackNotice) said once
    // why it is TCP, and the scan's metrics say it again; a connection over RDMA is worth a line.
    String connected = "Connected to gpudirect server {} over {}{} ({} streams): {}";
    Object[] args = {client.serverName, client.transport.name(), config.tls() ? " with TLS" : "",
        config.streams(), client.transportReason};
    if (client.transport instanceof RdmaTransport) {
      LOG.info(connected, args);
    } else {
      LOG.debug(connected, args);
    }
    return client;
  }

  @Override
  public InetSocketAddress server() {
    return server;
  }

  @Override
  public String transport() {
    return transport.name();
  }

  @Override
  public String transportReason() {
    return transportReason;
  }

  @Override
  public FileEntry stat(String path) {
    // "access", not "stat": users ran cat, ls or a Spark read; stat is our own first step.
    Message m = control(path, "access '" + path + "'", id -> new StatRequest(id, path));
    FileMeta e = ((StatResponse) m).entry();
    return new FileEntry(e.path(), e.length(), e.modifiedMillis(), e.directory(), e.version());
  }

  /**
   * {@inheritDoc} Page by page, each asked for after the last path of the one before. What a
   * server can make this hold or take is bounded by {@link ClientConfig#maxListEntries},
   * {@link ClientConfig#maxListBytes} and {@link ClientConfig#listTimeout}, whatever it sends;
   * past one, the listing fails with a {@link ListingLimitException} that says which. A page
   * that does not go on in {@link ListingOrder} after the one before is refused too.
   */
  @Override
  public List<FileEntry> list(String path) {
    ListingBudget budget = new ListingBudget(serverName, path, config);
    List<FileEntry> out = new ArrayList<>();
    String after = ListRequest.FIRST_PAGE;
    while (true) {
      String cursor = after;
      ListResponse page = (ListResponse) control(path, "list '" + path + "'",
          id -> new ListRequest(id, path, cursor), budget);
      budget.take(page);
      for (FileMeta e : page.entries()) {
        if (!after.isEmpty() && ListingOrder.INSTANCE.compare(e.path(), after) <= 0) {
          throw new GpuDirectException("Gpudirect server " + serverName + " sent a listing of '"
              + path + "' that does not go on in order: '" + e.path() + "' came after '" + after
              + "'. The server is broken or not a gpudirect server of this version");
        }
        out.add(new FileEntry(e.path(), e.length(), e.modifiedMillis(), e.directory(), e.version()));
        after = e.path();
      }
      if (page.last()) {
        return out;
      }
    }
  }

  @Override
  public CompletableFuture<Void> readAsync(String path, FileVersion version, long offset, ByteBuffer dst) {
    try {
      return onWorker(readInternal(path, version, offset, dst, false, chunkLength(), null));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Leaves the check of the bytes' CRC32C to the caller, who completes it where the bytes go
   * next: the GPU, in device memory. The future gives the CRC32C the server sent for all of
   * {@code dst}'s bytes (the chunks' combined), or nothing when the client was built without
   * checksums.
   */
  @Override
  public CompletableFuture<OptionalInt> readAsyncUnverified(String path, FileVersion version, long offset,
      ByteBuffer dst) {
    if (!config.checksums()) {
      return readAsync(path, version, offset, dst).thenApply(v -> OptionalInt.empty());
    }
    try {
      ByteBuffer bytes = dst.slice();
      int chunk = chunkLength();
      OptionalInt[] crcs = new OptionalInt[Math.max(1, (bytes.remaining() + chunk - 1) / chunk)];
      return onWorker(readInternal(path, version, offset, dst, false, chunk, crcs)
          .thenApply(v -> combined(path, offset, bytes, chunk, crcs)));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Completes off the connection's reader thread, so that callers' callbacks cannot stall it. */
  private <T> CompletableFuture<T> onWorker(CompletableFuture<T> internal) {
    CompletableFuture<T> result = new CompletableFuture<>();
    internal.whenComplete((v, err) -> runWorker(() -> {
      if (err == null) {
        result.complete(v);
      } else {
        result.completeExceptionally(unwrap(err));
      }
    }));
    return result;
  }

  /**
   * The CRC32C of a read's bytes from its chunks' (each {@code chunk} long but the last).
   * Should some chunk have come without one (a server restarted without checksums between a
   * chunk and its retry), the others are checked here and none is handed on.
   */
  private OptionalInt combined(String path, long offset, ByteBuffer bytes, int chunk, OptionalInt[] crcs) {
    boolean all = true;
    for (OptionalInt c : crcs) {
      all &= c.isPresent();
    }
    int crc = 0;
    for (int i = 0; i < crcs.length; i++) {
      int from = i * chunk;
      int len = Math.min(chunk, bytes.remaining() - from);
      if (all) {
        crc = i == 0 ? crcs[i].getAsInt() : Crc32cCombine.combine(crc, crcs[i].getAsInt(), len);
      } else if (crcs[i].isPresent()) {
        CRC32C actual = new CRC32C();
        actual.update(bytes.slice(from, len));
        if ((int) actual.getValue() != crcs[i].getAsInt()) {
          throw new ChecksumMismatchException(path, offset + from, len,
              "from gpudirect server " + serverName, crcs[i].getAsInt(), (int) actual.getValue());
        }
      }
    }
    return all ? OptionalInt.of(crc) : OptionalInt.empty();
  }

  @Override
  public void read(String path, FileVersion version, long offset, ByteBuffer dst) {
    try {
      readInternal(path, version, offset, dst, true, chunkLength(), null).join();
    } catch (CompletionException e) {
      throw rethrowable(unwrap(e));
    }
  }

  /**
   * With RDMA, reads {@code length} bytes straight into device memory at {@code address}: the
   * range is registered with the NIC (needs nvidia-peermem; registrations are cached, since RMM
   * keeps its pool's memory mapped) and the server RDMA-writes into it, chunk by chunk, over
   * every connection. Returns false, having read nothing, when the transport is TCP or device
   * memory cannot be registered; the caller then reads into pinned host chunks and copies. The
   * first registration failure is logged once and added to {@link #transportReason()}.
   */
  @Override
  public boolean readIntoDevice(String path, FileVersion version, long offset, long address, long length) {
    checkOpen();
    if (!(transport instanceof RdmaTransport) || deviceRegistrationFailure != null || length == 0) {
      return false;
    }
    RegisteredRange range;
    try {
      range = deviceRegistrations.acquire(address, length,
          () -> {
            if (!((RdmaTransport) transport).verbs().registersDeviceMemory()) {
              throw new RdmaException(RdmaException.Phase.REGISTER, "gpudirect server " + serverName,
                  ((RdmaTransport) transport).verbs().describe() + " cannot map GPU memory (UCX built"
                  + " without CUDA; see docs/deployment.md)", null);
            }
            return RegisteredRange.register((RdmaConnection) connection(), address, length);
          });
    } catch (RdmaException e) {
      if (e.phase() != RdmaException.Phase.REGISTER) {
        throw e;
      }
      synchronized (this) {
        if (deviceRegistrationFailure == null) {
          deviceRegistrationFailure = e.getMessage();
          transportReason = transportReason + "; GPU memory cannot be registered for RDMA ("
              + e.getMessage() + "): RDMA into registered pinned host chunks, then a copy to the GPU";
          TransportSelector.logOnce("Gpudirect server " + serverName + ": " + transportReason);
        }
      }
      return false;
    }
    try {
      readIntoRange(path, version, offset, range, address, length).join();
    } catch (CompletionException e) {
      throw rethrowable(unwrap(e));
    } finally {
      deviceRegistrations.release(range);
    }
    return true;
  }

  private CompletableFuture<Void> readIntoRange(String path, FileVersion version, long offset, RegisteredRange range,
      long address, long length) {
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
          reads.incrementAndGet();
          fetchNanos.addAndGet(System.nanoTime() - start);
          if (err != null) {
            for (CompletableFuture<Void> part : parts) {
              if (part.isCompletedExceptionally()) {
                throw new CompletionException(unwrap(part.handle((x, e) -> e).join()));
              }
            }
            throw new CompletionException(unwrap(err));
          }
          bytesFetched.addAndGet(length);
          return null;
        });
  }

  @Override
  public TransferStats stats() {
    return new TransferStats(bytesFetched.get(), reads.get(), fetchNanos.get(), retries.get());
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    deviceRegistrations.close();
    synchronized (slots) {
      for (Connection c : slots) {
        if (c != null) {
          c.close();
        }
      }
      retired.forEach(Connection::close);
      retired.clear();
    }
    timer.shutdownNow();
    workers.shutdownNow();
    try {
      timer.awaitTermination(2, TimeUnit.SECONDS);
      workers.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "BlockClient[" + serverName + ", " + transport.name() + ", " + config + "]";
  }

  // ---- reads

  /**
   * Sends the chunks of a read. A caller that waits for a read of one chunk ({@code callerWaits})
   * reads its answer itself when it can (see {@link Connection#readAnswersUntil}): for a small
   * read, that saves waking the connection's reader thread and then this one. With
   * {@code unverifiedCrcs}, each chunk's CRC32C is kept there, unchecked, in chunk order.
   */
  private CompletableFuture<Void> readInternal(String path, FileVersion version, long offset,
      ByteBuffer dst, boolean callerWaits, int chunk, OptionalInt[] unverifiedCrcs) {
    checkOpen();
    if (path == null || version == null) {
      throw new IllegalArgumentException("path and version must not be null");
    }
    if (offset < 0) {
      throw new IllegalArgumentException("Cannot read '" + path + "' from gpudirect server "
          + serverName + ": negative offset " + offset);
    }
    if (dst.isReadOnly()) {
      throw new IllegalArgumentException("Cannot read '" + path + "' into a read-only buffer");
    }
    long start = System.nanoTime();
    int total = dst.remaining();
    ByteBuffer target = dst.slice();
    List<CompletableFuture<Void>> parts = new ArrayList<>();
    AtomicBoolean failed = new AtomicBoolean();
    int off = 0;
    do {
      int len = Math.min(chunk, total - off);
      CompletableFuture<Void> part = admit(path, len, failed, parts);
      if (part == null) {
        break;
      }
      ByteBuffer slice = target.slice(off, len);
      Target into = unverifiedCrcs == null ? new HostTarget(slice)
          : new UnverifiedHostTarget(slice, unverifiedCrcs, off / chunk);
      sendChunk(new Chunk(path, version, offset + off, len, into, part, failed), 0,
          callerWaits && len == total);
      off += len;
    } while (off < total && !failed.get());

    return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]))
        .handle((v, err) -> {
          reads.incrementAndGet();
          fetchNanos.addAndGet(System.nanoTime() - start);
          if (err != null) {
            // The first failed chunk in file order: deterministic, and usually the root cause.
            Throwable first = err;
            for (CompletableFuture<Void> part : parts) {
              if (part.isCompletedExceptionally()) {
                first = part.handle((x, e) -> e).join();
                break;
              }
            }
            throw new CompletionException(unwrap(first));
          }
          bytesFetched.addAndGet(total);
          dst.position(dst.position() + total);
          return null;
        });
  }

  /** One request of a read; {@code readFailed} is set once any chunk of the same read failed. */
  private record Chunk(String path, FileVersion version, long offset, int length, Target target,
      CompletableFuture<Void> done, AtomicBoolean readFailed) {}

  /** Where a chunk lands, and how a connection puts it there. */
  private interface Target {
    /** {@code callerReads}: the calling thread reads the answer itself (a hint). */
    CompletableFuture<Void> read(Connection conn, ReadRequest request, boolean callerReads);
  }

  /** Host memory: any transport reads into it (again from the start on a retry). */
  private record HostTarget(ByteBuffer dst) implements Target {
    @Override
    public CompletableFuture<Void> read(Connection conn, ReadRequest request, boolean callerReads) {
      dst.clear();
      return callerReads ? conn.readForCaller(request, dst) : conn.read(request, dst);
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

  /** Registered device memory: the server RDMA-writes at {@code address}. */
  private record DeviceTarget(RegisteredRange range, long address) implements Target {
    @Override
    public CompletableFuture<Void> read(Connection conn, ReadRequest request, boolean callerReads) {
      if (!(conn instanceof RdmaConnection rdma)) {
        throw new GpuDirectException("a device read needs an RDMA connection, got " + conn);
      }
      return rdma.readInto(request, range.regionFor(address, request.length()), address);
    }
  }

  /**
   * Sends one chunk. With {@code callerReads} the calling thread then reads answers on that
   * connection until this chunk's has arrived, if no one else is reading them (first try only;
   * a retry goes out from a worker and the caller waits as for any read).
   */
  private void sendChunk(Chunk c, int attempt, boolean callerReads) {
    if (closed) {
      c.done.completeExceptionally(closedError());
      return;
    }
    Connection conn;
    try {
      conn = connection();
    } catch (RuntimeException e) {
      retryOrFail(c, attempt, e);
      return;
    }
    ReadRequest request = new ReadRequest(requestIds.incrementAndGet(), c.path, c.version, c.offset,
        c.length);
    AtomicBoolean timedOut = new AtomicBoolean();
    CompletableFuture<Void> f;
    try {
      f = c.target.read(conn, request, callerReads);
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    CompletableFuture<Void> pendingRead = f;
    ScheduledFuture<?> timeout = schedule(() -> {
      if (!pendingRead.isDone()) {
        timedOut.set(true);
        conn.abort(new ConnectionLostException("Connection to gpudirect server " + serverName
            + " closed: request " + request.requestId() + " timed out", null));
      }
    }, config.requestTimeout().toNanos());
    f.whenComplete((v, err) -> {
      if (timeout != null) {
        timeout.cancel(false);
      }
      if (err == null) {
        c.done.complete(null);
      } else if (timedOut.get()) {
        c.done.completeExceptionally(new RequestTimeoutException("Reading '" + c.path
            + "' at offset " + c.offset + " (" + request.length() + " bytes) from gpudirect"
            + " server " + serverName + " timed out after " + config.requestTimeout()));
      } else {
        Throwable cause = unwrap(err);
        if (cause instanceof ChecksumMismatchException) {
          retire(conn);
        }
        retryOrFail(c, attempt, cause);
      }
    });
    if (callerReads) {
      conn.readAnswersUntil(f);
    }
  }

  private void retryOrFail(Chunk c, int attempt, Throwable err) {
    boolean retryable = err instanceof ConnectionLostException
        || err instanceof ChecksumMismatchException
        || (err instanceof TransportException && !(err instanceof RequestTimeoutException));
    // Once another chunk of the read has failed for good, the read fails: retrying this one
    // would only make the caller wait longer for that failure (a stalled server would make it
    // wait a request timeout per retry).
    if (retryable && attempt < config.maxRetries() && !closed && !c.readFailed().get()) {
      retries.incrementAndGet();
      long delay = backoffNanos(attempt);
      LOG.debug("Retrying '{}' at offset {} from {} in {} ms: {}", c.path, c.offset, serverName,
          TimeUnit.NANOSECONDS.toMillis(delay), err.getMessage());
      ScheduledFuture<?> s = schedule(() -> runWorker(() -> sendChunk(c, attempt + 1, false)), delay);
      if (s == null) {
        c.done.completeExceptionally(closedError());
      }
      return;
    }
    c.done.completeExceptionally(finalError(err, c.path, c.version, "read '" + c.path
        + "' at offset " + c.offset + " (" + c.length + " bytes)", attempt + 1));
  }

  // ---- control requests (stat, list)

  /** {@code what}: the action as the user would say it, naming the path ("list 'dir'"). */
  private Message control(String path, String what, LongFunction<Message> request) {
    return control(path, what, request, null);
  }

  /** A control call; within the listing's time too when {@code listing} is not null. */
  private Message control(String path, String what, LongFunction<Message> request,
      ListingBudget listing) {
    checkOpen();
    for (int attempt = 0; ; attempt++) {
      Throwable err;
      Connection conn = null;
      long wait = config.requestTimeout().toNanos();
      boolean listingTime = listing != null && listing.nanosLeft() < wait;
      try {
        if (listingTime) {
          wait = listing.nanosLeft();
          if (wait <= 0) {
            throw new TimeoutException();
          }
        }
        conn = connection();
        long id = requestIds.incrementAndGet();
        CompletableFuture<Message> f = conn.call(id, request.apply(id));
        Message m = f.get(wait, TimeUnit.NANOSECONDS);
        if (m instanceof ErrorResponse e) {
          throw new ServerErrorException(e.code(), e.message());
        }
        return m;
      } catch (TimeoutException e) {
        if (conn != null) {
          conn.abort(new ConnectionLostException("Connection to gpudirect server "
              + serverName + " closed: '" + what + "' timed out", null));
        }
        if (listingTime) {
          throw listing.timedOut();
        }
        throw new RequestTimeoutException("Cannot " + what + " on gpudirect"
            + " server " + serverName + ": no answer within " + config.requestTimeout());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new GpuDirectException("Interrupted: cannot " + what + " on gpudirect server "
            + serverName, e);
      } catch (ExecutionException e) {
        err = unwrap(e);
      } catch (RuntimeException e) {
        err = e;
      }
      boolean retryable = err instanceof ConnectionLostException
          || (err instanceof TransportException && !(err instanceof RequestTimeoutException));
      if (!retryable || attempt >= config.maxRetries() || closed) {
        throw rethrowable(finalError(err, path, FileVersion.ANY, what, attempt + 1));
      }
      retries.incrementAndGet();
      sleepNanos(backoffNanos(attempt));
    }
  }

  // ---- connections

  /** A live connection, round-robin over the slots; a broken one is replaced (one attempt). */
  private Connection connection() {
    int i = Math.floorMod(nextSlot.getAndIncrement(), slots.length);
    synchronized (slots) {
      Connection c = slots[i];
      if (c != null && c.isOpen()) {
        return c;
      }
    }
    Connection fresh = open();
    synchronized (slots) {
      Connection c = slots[i];
      if (closed) {
        fresh.close();
        throw closedError();
      }
      if (c != null && c.isOpen()) {
        fresh.close();
        return c;
      }
      if (c != null) {
        c.close();
      }
      slots[i] = fresh;
      return fresh;
    }
  }

  /**
   * Takes a connection that delivered a corrupt payload out of service: corruption can belong
   * to the path it takes (a bad NIC queue, a middlebox), so the retry, and every later request,
   * goes over a new connection. Reads already sent on it finish, each checked on its own; it
   * is closed once they have had their time (or when this client closes).
   */
  private void retire(Connection conn) {
    synchronized (slots) {
      for (int i = 0; i < slots.length; i++) {
        if (slots[i] == conn) {
          slots[i] = null;
        }
      }
      if (!closed && retired.add(conn)) {
        ScheduledFuture<?> s = schedule(() -> {
          retired.remove(conn);
          conn.close();
        }, config.requestTimeout().toNanos());
        if (s != null) {
          return;
        }
        retired.remove(conn);
      } else if (retired.contains(conn)) {
        return;
      }
    }
    conn.close();
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
      part.completeExceptionally(new GpuDirectException("Interrupted while reading '" + path
          + "' from gpudirect server " + serverName, e));
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

  private Connection open() {
    String name = "gpudirect-client-reader-" + serverName + "-"
        + connectionSerial.incrementAndGet();
    return transport.connect(server, new ConnectionOptions(config.secret(),
        config.connectTimeout(), name, config.checksums(), tls)
        .withSecretSetting(config.secretSetting()));
  }

  private Connection openWithRetry() {
    for (int attempt = 0; ; attempt++) {
      try {
        return open();
      } catch (TransportException e) {
        // Under transport=auto an RDMA setup failure is a reason to fall back, not to retry.
        if (attempt >= config.maxRetries() || closed || (e instanceof RdmaException && fallback != null)) {
          if (e instanceof RdmaException || attempt == 0) {
            throw e;
          }
          if (e instanceof ConnectFailedException f) {
            throw f.afterAttempts(attempt + 1);
          }
          throw new TransportException(e.getMessage() + " (after " + (attempt + 1) + " attempts)", e);
        }
        retries.incrementAndGet();
        LOG.debug("Connecting to {} failed, retrying: {}", serverName, e.getMessage());
        sleepNanos(backoffNanos(attempt));
      }
    }
  }

  /** How much of a read one request asks for. */
  private int chunkLength() {
    return Math.min(config.chunkSize(), maxReadLength());
  }

  private int maxReadLength() {
    int max = Integer.MAX_VALUE;
    synchronized (slots) {
      for (Connection c : slots) {
        if (c != null) {
          max = Math.min(max, c.maxReadLength());
        }
      }
    }
    return max;
  }

  // ---- errors and helpers

  private GpuDirectException finalError(Throwable err, String path, FileVersion version,
      String what, int attempts) {
    if (err instanceof ServerErrorException s && s.code() == ErrorCode.FILE_CHANGED) {
      return new FileChangedException(serverName, path, version, "Cannot " + what
          + " on gpudirect server " + serverName + ": " + s.getMessage(), s);
    }
    if (err instanceof ServerErrorException s) {
      return new RemoteFileException(s.code(), serverName, path, "Cannot " + what
          + " on gpudirect server " + serverName + ": " + s.getMessage(), s);
    }
    if (err instanceof ConnectionLostException) {
      return new ConnectionLostException("Cannot " + what + " on gpudirect server "
          + serverName + " after " + attempts + " attempt(s): "
          + err.getMessage(), err);
    }
    if (err instanceof ChecksumMismatchException) {
      return new ChecksumMismatchException(err.getMessage() + "; still wrong after "
          + attempts + " attempt(s)");
    }
    if (err instanceof TransportException) {
      return new TransportException("Cannot " + what + ": " + err.getMessage(), err);
    }
    if (err instanceof GpuDirectException g) {
      return g;
    }
    return new GpuDirectException("Cannot " + what + " on gpudirect server " + serverName
        + ": " + err, err);
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  private static RuntimeException rethrowable(Throwable t) {
    if (t instanceof RuntimeException r) {
      return r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    return new GpuDirectException(t.toString(), t);
  }

  private GpuDirectException closedError() {
    return new GpuDirectException("BlockClient for gpudirect server " + serverName
        + " is closed");
  }

  private void checkOpen() {
    if (closed) {
      throw closedError();
    }
  }

  private long backoffNanos(int attempt) {
    return config.retryBackoff().toNanos() << Math.min(attempt, 20);
  }

  private ScheduledFuture<?> schedule(Runnable task, long nanos) {
    try {
      return timer.schedule(task, nanos, TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      return null;
    }
  }

  private void runWorker(Runnable task) {
    try {
      workers.execute(task);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      task.run();
    }
  }

  private static void sleepNanos(long nanos) {
    try {
      TimeUnit.NANOSECONDS.sleep(nanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new GpuDirectException("Interrupted while waiting to retry", e);
    }
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
