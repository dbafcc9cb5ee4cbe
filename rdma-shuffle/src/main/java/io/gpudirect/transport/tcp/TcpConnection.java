package io.gpudirect.transport.tcp;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.CorruptFrameException;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.HelloAck;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.protocol.ProtocolException;
import io.gpudirect.protocol.RdmaReadDone;
import io.gpudirect.protocol.ReadData;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.Request;
import io.gpudirect.protocol.Response;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.protocol.ShuffleRead;
import io.gpudirect.tls.TlsChannel;
import io.gpudirect.transport.BlockMemory;
import io.gpudirect.transport.CallerReads;
import io.gpudirect.transport.ChecksumMismatchException;
import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionLostException;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.CorruptAnswerException;
import io.gpudirect.transport.PayloadMemory;
import io.gpudirect.transport.ServerErrorException;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.WritableByteChannel;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A blocking TCP connection. Callers write requests (under a lock); answers are read in order
 * by whichever thread holds the reading role ({@link #reading}): for READ_DATA, the payload
 * goes straight from the socket into the caller's buffer, then its CRC32C is checked. With
 * TLS, everything goes through a {@link TlsChannel} ({@code wire}) instead, which decrypts
 * payloads into the caller's buffer.
 *
 * <p>Who reads: the connection's reader thread, for pipelined and asynchronous requests; or a
 * caller that sent one read and waits for it ({@link #readForCaller}, then
 * {@link #readAnswersUntil}), which reads the answer itself when no one else is reading, as a
 * plain socket ping-pong would: no wake-up of the reader thread and then of the caller. A
 * holder of the role that lets go while answers are still due wakes the reader thread. While
 * no answer is due the reader thread parks, so that a caller can take the role; once the
 * connection has been idle for {@link #IDLE_WATCH_NANOS} it blocks in a read again, so that a
 * server that closes the connection or sends a connection error is noticed, as before, long
 * before the next request.
 */
final class TcpConnection implements Connection, CallerReads {
  private static final Logger LOG = LoggerFactory.getLogger(TcpConnection.class);
  private static final int HEAP_READ_SLICE = 256 * 1024;
  /** Payloads up to this size are checked on the reader thread (see receivePayload). */
  private static final int INLINE_VERIFY_BYTES = 64 * 1024;
  /** A READ_DATA frame before its payload: length, type, body. */
  private static final int READ_DATA_FRAME = Frames.HEADER_BYTES + new ReadData(0, 0, 0).encodedLength();
  /** The inbox holds a whole small answer: header, up to 64 KiB of payload, trailer. */
  private static final int INBOX_BYTES = READ_DATA_FRAME + INLINE_VERIFY_BYTES + ReadData.TRAILER_BYTES;
  /** How long without a request before the reader thread watches the socket (see above). */
  static final long IDLE_WATCH_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  /** A READ with the longest path and file id, and room to spare. */
  private static final int OUTBOX_BYTES = 8 * 1024;

  private final SocketChannel channel;
  /** What requests are written to and answers read from: the socket, or TLS over it. */
  private final ByteChannel wire;
  private final InetSocketAddress peer;
  private final String server;
  private final int maxReadLength;
  private final boolean crc;
  private final long capabilities;
  private final Object writeLock = new Object();
  /** Requests are encoded here, under {@link #writeLock} (room for a READ of the longest path). */
  private final ByteBuffer outbox = ByteBuffer.allocateDirect(OUTBOX_BYTES);
  private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
  private final Thread reader;
  /** Held by the one thread that reads answers now: the reader thread or a waiting caller. */
  private final AtomicBoolean reading =
      new AtomicBoolean();
  /** Answers due: requests sent whose answer has not been taken yet. */
  private final AtomicInteger due =
      new AtomicInteger();
  /** Of those, the small ones (see {@link #fill}). */
  private final AtomicInteger smallDue =
      new AtomicInteger();
  /** Checks large payloads' checksums off this connection's reader thread. */
  private final ConnectionThreads threads;
  /**
   * Requests sent so far (written under {@link #writeLock}): the reader thread tells an idle
   * connection by this not changing while it parks, so that no send reads the clock.
   */
  private volatile long sends;
  /** When the read a caller waits for while it reads answers times out (see CallerReads). */
  private volatile long callerDeadline = NO_DEADLINE;
  private volatile GpuDirectException failure;
  /** The read whose payload the reader thread is filling; it is no longer in {@link #pending}. */
  private volatile Pending receiving;

  /**
   * A request waiting for its answer. {@code unverified}: a READ whose checksum is handed to
   * the caller (its future completes with the CRC32C, or null without checksums). A READ has
   * either {@code dst} or {@code memory}, bound when its payload starts to arrive. A
   * SHUFFLE_READ ({@code block}) has {@code blockMemory}, bound when its answer's header says
   * how long its payload is; its future completes with that header.
   */
  private record Pending(long requestId, ReadRequest read, ByteBuffer dst, PayloadMemory memory,
      CompletableFuture<Object> future, boolean unverified, ShuffleRead block,
      BlockMemory blockMemory) {
    Pending(long requestId, ReadRequest read, ByteBuffer dst, PayloadMemory memory,
        CompletableFuture<Object> future, boolean unverified) {
      this(requestId, read, dst, memory, future, unverified, null, null);
    }

    /**
     * A control call or a READ whose whole answer fits the inbox; or a SHUFFLE_READ, whose
     * length is not known before its answer and which is most often small (a block of one map
     * task for one reducer), so that its whole answer may come in one read.
     */
    boolean small() {
      return read == null || read.length() <= INLINE_VERIFY_BYTES;
    }

    /** What the payload is of, for a checksum mismatch: the file's path or the block's name. */
    String source() {
      return read != null ? read.path() : block.block().name();
    }
  }

  private TcpConnection(SocketChannel channel, ByteChannel wire, InetSocketAddress peer,
      HelloAck ack, String threadName, ConnectionThreads threads) {
    this.threads = threads;
    this.channel = channel;
    this.wire = wire;
    this.peer = peer;
    this.server = describe(peer);
    this.maxReadLength = ack.maxReadLength();
    this.crc = (ack.capabilities() & Protocol.CAP_CRC32C) != 0;
    this.capabilities = ack.capabilities();
    this.reader = new Thread(this::readerLoop, threadName);
    this.reader.setDaemon(true);
  }

  static String describe(InetSocketAddress a) {
    String host = a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
    return host + ":" + a.getPort();
  }

  /** Connects and shakes hands (see {@link TcpHandshake}), then starts the reader thread. */
  static TcpConnection open(InetSocketAddress peer, ConnectionOptions options, ConnectionThreads threads) {
    TcpHandshake.Done done = TcpHandshake.connect(peer, options, threads);
    try {
      TcpConnection c = new TcpConnection(done.channel(), done.wire(), peer, done.ack(),
          options.threadName(), threads);
      c.reader.start();
      return c;
    } catch (RuntimeException e) {
      closeQuietly(done.channel());
      throw e;
    }
  }

  @Override
  public InetSocketAddress peer() {
    return peer;
  }

  @Override
  public int maxReadLength() {
    return maxReadLength;
  }

  @Override
  public long capabilities() {
    return capabilities;
  }

  @Override
  public boolean isOpen() {
    return failure == null;
  }

  @Override
  @SuppressWarnings("unchecked")
  public CompletableFuture<Message> call(Request request) {
    CompletableFuture<Object> f = send(new Pending(request.requestId(), null, null, null,
        new CompletableFuture<>(), false), request, false);
    return (CompletableFuture<Message>) (CompletableFuture<?>) f;
  }

  @Override
  public CompletableFuture<Void> read(ReadRequest request, ByteBuffer dst) {
    return read(request, dst, false);
  }

  @Override
  public Optional<CallerReads> callerReads() {
    return Optional.of(this);
  }

  @Override
  @SuppressWarnings("unchecked")
  public CompletableFuture<Void> readForCaller(ReadRequest request, ByteBuffer dst) {
    // A verified read's future completes with null: it is a CompletableFuture<Void> already,
    // and a caller that reads its answer itself is spared a future chained to it.
    CompletableFuture<?> f = send(readPending(request, dst, false), request, true);
    return (CompletableFuture<Void>) f;
  }

  @Override
  public CompletableFuture<OptionalInt> readUnverified(ReadRequest request, ByteBuffer dst) {
    return send(readPending(request, dst, true), request, false)
        .thenApply(crc -> crc == null ? OptionalInt.empty() : OptionalInt.of((Integer) crc));
  }

  @Override
  public CompletableFuture<Void> read(ReadRequest request, PayloadMemory dst) {
    return send(new Pending(request.requestId(), request, null, dst, new CompletableFuture<>(),
        false), request, false).thenApply(x -> null);
  }

  @Override
  public CompletableFuture<OptionalInt> readUnverified(ReadRequest request, PayloadMemory dst) {
    return send(new Pending(request.requestId(), request, null, dst, new CompletableFuture<>(),
        true), request, false)
        .thenApply(crc -> crc == null ? OptionalInt.empty() : OptionalInt.of((Integer) crc));
  }

  @Override
  @SuppressWarnings("unchecked")
  public CompletableFuture<ShuffleData> readBlock(ShuffleRead request, BlockMemory memory) {
    CompletableFuture<?> f = send(new Pending(request.requestId(), null, null, null,
        new CompletableFuture<>(), false, request, memory), request, false);
    return (CompletableFuture<ShuffleData>) f;
  }

  private CompletableFuture<Void> read(ReadRequest request, ByteBuffer dst, boolean callerReads) {
    return send(readPending(request, dst, false), request, callerReads).thenApply(x -> null);
  }

  /**
   * A request's frame, encoded into {@link #outbox} when it fits (under the write lock): no
   * heap buffer per request, which the JDK would copy into a direct one of its own to write.
   */
  private ByteBuffer encode(Message request) {
    int length = Frames.frameLength(request);
    return length <= outbox.capacity() ? Frames.encode(request, outbox.clear(), length)
        : Frames.encode(request);
  }

  private static Pending readPending(ReadRequest request, ByteBuffer dst, boolean unverified) {
    checkRoom(request, dst);
    return new Pending(request.requestId(), request, dst, null, new CompletableFuture<>(), unverified);
  }

  private static void checkRoom(ReadRequest request, ByteBuffer dst) {
    if (dst.remaining() != request.length()) {
      throw new IllegalArgumentException("Destination has " + dst.remaining()
          + " bytes left for a READ of " + request.length());
    }
  }

  /**
   * Sends a request. Unless its caller reads the answer itself, the reader thread is woken
   * when no one is reading; a thread that is reading reads this answer too, or wakes the
   * reader thread when it lets go (see {@link #releaseReading}).
   */
  private CompletableFuture<Object> send(Pending p, Message request, boolean callerReads) {
    pending.put(p.requestId, p);
    GpuDirectException f = failure;
    if (f != null) {
      pending.remove(p.requestId);
      p.future.completeExceptionally(f);
      return p.future;
    }
    if (p.small()) {
      smallDue.incrementAndGet();
    }
    due.incrementAndGet();
    try {
      synchronized (writeLock) {
        sends++;
        writeFully(wire, encode(request));
      }
    } catch (IOException e) {
      abort(new ConnectionLostException("Connection to gpudirect server " + server
          + " failed while sending a request: " + e, e));
    }
    if (!callerReads && !reading.get()) {
      LockSupport.unpark(reader);
    }
    return p.future;
  }

  /**
   * {@inheritDoc} Not on an interrupted thread: a socket channel that a blocked thread is
   * interrupted in closes itself, and this connection is shared; such a caller waits for the
   * reader thread instead. (An interrupt that arrives during the read still closes it: every
   * read outstanding on it then fails as on a lost connection, and the client retries them.)
   */
  @Override
  public void readAnswersUntil(CompletableFuture<?> done, long deadlineNanos) {
    if (done.isDone() || due.get() == 0 || Thread.currentThread().isInterrupted()
        || !reading.compareAndSet(false, true)) {
      return;
    }
    callerDeadline = deadlineNanos;
    try {
      while (!done.isDone() && due.get() > 0 && failure == null) {
        readAnswer();
      }
    } catch (Throwable t) {
      failReading(t);
    } finally {
      callerDeadline = NO_DEADLINE;
      releaseReading();
    }
  }

  /**
   * The reader thread: reads answers while any are due and no caller is reading them; parks
   * otherwise. After {@link #IDLE_WATCH_NANOS} without a request it blocks in a read anyway,
   * to notice at once a server that closes the connection or sends a connection error.
   */
  private void readerLoop() {
    long sendsSeen = -1;
    while (failure == null) {
      boolean idle = due.get() == 0;
      long sent = sends;
      if (idle && sent != sendsSeen) {
        // A request went out since the last look: not idle yet. One whole park with none is.
        sendsSeen = sent;
        LockSupport.parkNanos(this, IDLE_WATCH_NANOS);
        continue;
      }
      if (!reading.compareAndSet(false, true)) {
        // A caller is reading; it wakes this thread if it lets go with answers still due.
        // Meanwhile this thread keeps the caller's deadline (see CallerReads).
        long deadline = callerDeadline;
        if (deadline != NO_DEADLINE && System.nanoTime() - deadline >= 0) {
          abort(new ConnectionLostException("Connection to gpudirect server " + server
              + " closed: no answer came in time for the read its caller waits for", null));
          continue;
        }
        LockSupport.parkNanos(this, IDLE_WATCH_NANOS);
        continue;
      }
      try {
        if (idle) {
          readAnswer();
        }
        while (due.get() > 0 && failure == null) {
          readAnswer();
        }
      } catch (Throwable t) {
        failReading(t);
      } finally {
        releaseReading();
      }
      // Idle only after a whole park from now with no request sent.
      sendsSeen = -1;
    }
  }

  /**
   * Lets go of the reading role. Answers still due wake the reader thread (it may be this
   * thread: then its next park returns at once). A connection that failed meanwhile fails
   * what is outstanding here, since no reader will.
   */
  private void releaseReading() {
    reading.set(false);
    GpuDirectException f = failure;
    if (f != null) {
      if (reading.compareAndSet(false, true)) {
        fail(f);
      }
      LockSupport.unpark(reader);
    } else if (due.get() > 0) {
      LockSupport.unpark(reader);
    }
  }

  /** A read by the holder of the role failed: the connection is lost. */
  private void failReading(Throwable t) {
    GpuDirectException cause = failure;
    if (cause == null) {
      cause = t instanceof ConnectionLostException c ? c
          : t instanceof CorruptAnswerException c ? c
          : new ConnectionLostException("Connection to gpudirect server " + server
              + " lost: " + t, t);
    }
    fail(cause);
  }

  /**
   * Bytes received and not yet consumed (read mode); only the holder of the reading role uses
   * it. Frames and trailers are read through it, so that a small answer (header, payload,
   * trailer) takes one {@code read(2)} rather than four; see {@link #fill} for how much each
   * read takes. Direct, so the JDK needs no temporary buffer for it; one per connection.
   */
  private final ByteBuffer inbox = ByteBuffer.allocateDirect(INBOX_BYTES).flip();

  /** Reads and dispatches one answer; only the holder of the reading role calls it. */
  private void readAnswer() throws IOException {
    Message m;
    try {
      m = readFrame();
    } catch (CorruptFrameException e) {
      // Which request it answers is in the frame, which cannot be believed: every request
      // outstanding here fails with this, and may be retried on a new connection.
      throw new CorruptAnswerException("Corrupt answer from gpudirect server " + server + ": "
          + e.getMessage() + "; the connection is closed", e);
    }
    if (m instanceof ReadData d) {
      receivePayload(d);
    } else if (m instanceof ShuffleData d) {
      receiveBlock(d);
    } else if (m instanceof ErrorResponse e) {
      if (e.requestId() == ErrorResponse.CONNECTION) {
        throw new ServerErrorException(e.code(), "Gpudirect server " + server
            + " closed the connection: " + e.message());
      }
      take(e.requestId(), m).future.completeExceptionally(
          new ServerErrorException(e.code(), e.message()));
    } else if (m instanceof Response r && !(m instanceof RdmaReadDone)) {
      // RDMA_READ_DONE belongs on the queue pair; on this connection it is a broken server.
      take(r.requestId(), m).future.complete(m);
    } else {
      throw new ProtocolException("Unexpected " + m.type() + " from server " + server);
    }
  }

  /** The next frame off the wire. */
  private Message readFrame() throws IOException {
    if (!fill(4, true)) {
      throw new ConnectionLostException("Gpudirect server " + server
          + " closed the connection", null);
    }
    int n = Frames.checkLength(inbox.getInt());
    if (n <= inbox.capacity()) {
      fill(n, false);
      Message m = Frames.decode(inbox.slice(inbox.position(), n));
      inbox.position(inbox.position() + n);
      return m;
    }
    ByteBuffer frame = ByteBuffer.allocate(n);
    drainInbox(frame);
    Frames.readFully(wire, frame, false);
    return Frames.decode(frame.flip());
  }

  private void receivePayload(ReadData d) throws IOException {
    Pending p = take(d.requestId(), d);
    if (p.read == null || d.length() != p.read.length() || d.offset() != p.read.offset()) {
      throw new ProtocolException("READ_DATA for request " + d.requestId() + " (offset "
          + d.offset() + ", length " + d.length() + ") does not match its request "
          + p.read);
    }
    receiving = p;
    ByteBuffer dst = p.dst;
    RuntimeException unbound = null;
    if (dst == null) {
      // Late binding: the memory is taken now that this payload is next on the wire.
      try {
        dst = p.memory.bind();
        checkRoom(p.read, dst);
      } catch (RuntimeException e) {
        dst = null;
        unbound = e;
      }
    }
    receive(p, p.read.length(), dst, unbound, null);
  }

  /** A SHUFFLE_READ's answer: its memory bound now that the header says how long it is. */
  private void receiveBlock(ShuffleData d) throws IOException {
    Pending p = take(d.requestId(), d);
    if (p.block == null || !d.answers(p.block)) {
      throw new ProtocolException("SHUFFLE_DATA for request " + d.requestId() + " (block length "
          + d.blockLength() + ", offset " + d.offset() + ", length " + d.length() + ", "
          + d.version().describe() + ") does not answer its request " + (p.block != null
          ? p.block : p.read));
    }
    receiving = p;
    ByteBuffer dst = null;
    RuntimeException unbound = null;
    try {
      dst = p.blockMemory.bind(d);
      if (dst.remaining() != d.length()) {
        throw new IllegalArgumentException("Destination has " + dst.remaining()
            + " bytes left for a window of " + d.length() + " bytes of " + p.block.block().name());
      }
    } catch (RuntimeException e) {
      dst = null;
      unbound = e;
    }
    receive(p, d.length(), dst, unbound, d);
  }

  /**
   * The {@code length} payload bytes of {@code p} into {@code dst} (past them when it is null:
   * {@code unbound} says why there was no memory, and fails this read alone), then the trailer;
   * a good payload completes {@code p} with {@code answer} (or, unverified, with its CRC32C).
   */
  private void receive(Pending p, int length, ByteBuffer dst, RuntimeException unbound,
      Object answer) throws IOException {
    boolean checkOnTheWay = false;
    if (dst == null) {
      // No memory for it: read past the payload, so that this read alone fails.
      skip(length);
    } else {
      int start = dst.position();
      drainInbox(dst);
      // A large payload into direct memory is checksummed as it arrives (see receiveChecking).
      checkOnTheWay = crc && !p.unverified && dst.isDirect() && length > INLINE_VERIFY_BYTES;
      if (checkOnTheWay) {
        receiveChecking(dst, start);
      } else if (dst.isDirect()) {
        Frames.readFully(wire, dst, false);
      } else {
        readIntoHeap(dst);
      }
    }
    fill(ReadData.trailerBytes(crc), false);
    byte status = inbox.get();
    int expected = crc ? inbox.getInt() : 0;
    if (status != ReadData.PAYLOAD_GOOD) {
      voided(p, status);
      return;
    }
    // Still "receiving" until the trailer is in: a connection lost before then fails this read too.
    receiving = null;
    if (unbound != null) {
      p.future.completeExceptionally(unbound);
      return;
    }
    if (!crc) {
      p.future.complete(answer);
      return;
    }
    if (p.unverified) {
      p.future.complete(expected);
      return;
    }
    // A small payload is checked here, where checking costs less than a hand-off to the pool;
    // a large one into heap memory on another core, so that this thread goes on reading.
    if (checkOnTheWay) {
      settle(p, length, expected, (int) onTheWay.getValue(), answer);
    } else if (length <= INLINE_VERIFY_BYTES) {
      onTheWay.reset();
      onTheWay.update(dst.duplicate().flip());
      settle(p, length, expected, (int) onTheWay.getValue(), answer);
    } else {
      ByteBuffer bytes = dst;
      threads.verify(() -> verify(p, length, bytes, expected, answer));
    }
  }

  /**
   * The server voided the payload just received (the file changed while it was sent): the
   * ERROR that says why follows at once, and the read fails with it; the bytes in the
   * caller's buffer must not be used.
   */
  private void voided(Pending p, byte status) throws IOException {
    if (status != ReadData.PAYLOAD_VOID) {
      throw new ProtocolException("READ_DATA trailer of request " + p.requestId
          + " has status " + status + "; expected 0 or 1");
    }
    Message m = readFrame();
    receiving = null;
    if (!(m instanceof ErrorResponse e) || e.requestId() != p.requestId) {
      throw new ProtocolException("Server " + server + " voided the payload of request "
          + p.requestId + " but sent " + m.type() + " instead of its ERROR");
    }
    p.future.completeExceptionally(new ServerErrorException(e.code(), e.message()));
  }

  /** The CRC32C of the payload being received by {@link #receiveChecking}; reading role only. */
  private final CRC32C onTheWay = new CRC32C();

  /**
   * Reads the rest of a payload into its direct buffer and updates {@link #onTheWay} with the
   * bytes of each {@code read(2)} right after it put them there, while they are still in this
   * core's cache (a read returns some 100-200 KiB on loopback). Checking the whole chunk on the
   * pool afterwards read it back from memory: 4 MiB per chunk, on the same 2 cores
   * (docs/benchmarks.md, "Profile").
   */
  private void receiveChecking(ByteBuffer dst, int start) throws IOException {
    onTheWay.reset();
    ByteBuffer view = dst.duplicate();
    view.limit(dst.position()).position(start);
    onTheWay.update(view);
    while (dst.hasRemaining()) {
      int from = dst.position();
      if (wire.read(dst) < 0) {
        throw new EOFException("Stream ended with " + dst.remaining()
            + " bytes still expected");
      }
      view.limit(dst.position()).position(from);
      onTheWay.update(view);
    }
  }

  /**
   * Makes {@code n} bytes (at most the inbox's capacity) available in the inbox; false only
   * when the stream ends before any, if {@code eofOk}. How much one {@code read(2)} may take:
   * while a small answer is due, all the inbox holds, so that header, payload and trailer come
   * in one call; otherwise no more than the bytes needed or a trailer and the next READ_DATA
   * header, so that a large payload still goes from the socket straight into its buffer (at
   * most that many of its bytes pass through the inbox).
   */
  private boolean fill(int n, boolean eofOk) throws IOException {
    if (inbox.remaining() >= n) {
      return true;
    }
    inbox.compact();
    try {
      int room = smallDue.get() > 0 ? inbox.capacity()
          : Math.min(inbox.capacity(), Math.max(n, ReadData.TRAILER_BYTES + READ_DATA_FRAME));
      inbox.limit(room);
      while (inbox.position() < n) {
        if (wire.read(inbox) < 0) {
          if (eofOk && inbox.position() == 0) {
            return false;
          }
          throw new EOFException("Stream ended with " + (n - inbox.position())
              + " bytes still expected");
        }
      }
      return true;
    } finally {
      inbox.flip();
    }
  }

  /** Reads past {@code n} bytes of payload, through the inbox. */
  private void skip(int n) throws IOException {
    for (int left = n; left > 0; ) {
      int k = Math.min(left, inbox.capacity());
      fill(k, false);
      inbox.position(inbox.position() + k);
      left -= k;
    }
  }

  /** Moves what the inbox holds of {@code dst}'s bytes into it. */
  private void drainInbox(ByteBuffer dst) {
    int n = Math.min(inbox.remaining(), dst.remaining());
    if (n > 0) {
      dst.put(inbox.slice(inbox.position(), n));
      inbox.position(inbox.position() + n);
    }
  }

  private void verify(Pending p, int length, ByteBuffer dst, int expected, Object answer) {
    CRC32C c = new CRC32C();
    c.update(dst.duplicate().flip());
    settle(p, length, expected, (int) c.getValue(), answer);
  }

  private void settle(Pending p, int length, int expected, int actual, Object answer) {
    if (actual != expected) {
      long offset = p.read != null ? p.read.offset() : p.block.offset();
      p.future.completeExceptionally(new ChecksumMismatchException(p.source(), offset, length,
          "from gpudirect server " + server, expected, actual));
    } else {
      p.future.complete(answer);
    }
  }

  /**
   * The JDK reads a socket into a heap buffer through a temporary direct buffer as large as
   * the read, cached per thread; reading in slices keeps that copy buffer small.
   */
  private void readIntoHeap(ByteBuffer dst) throws IOException {
    int limit = dst.limit();
    try {
      while (dst.position() < limit) {
        dst.limit(Math.min(limit, dst.position() + HEAP_READ_SLICE));
        Frames.readFully(wire, dst, false);
      }
    } finally {
      dst.limit(limit);
    }
  }

  private Pending take(long requestId, Message m) {
    Pending p = pending.remove(requestId);
    if (p == null) {
      throw new ProtocolException("Server " + server + " sent " + m.type()
          + " for unknown request " + requestId);
    }
    if (p.small()) {
      smallDue.decrementAndGet();
    }
    due.decrementAndGet();
    return p;
  }

  @Override
  public void abort(GpuDirectException cause) {
    synchronized (this) {
      if (failure != null) {
        return;
      }
      failure = cause;
    }
    closeQuietly(channel);
    // The thread reading answers, if any, wakes up with an error and fails everything
    // outstanding; until then it may still be writing into a caller's buffer, so it alone
    // fails them. With no one reading, this thread does, holding the role so no one starts.
    if (reading.compareAndSet(false, true)) {
      fail(cause);
    }
    LockSupport.unpark(reader);
  }

  private void fail(GpuDirectException cause) {
    synchronized (this) {
      if (failure == null) {
        failure = cause;
      }
    }
    closeQuietly(channel);
    Pending r = receiving;
    if (r != null) {
      r.future.completeExceptionally(cause);
    }
    for (Long id : pending.keySet()) {
      Pending p = pending.remove(id);
      if (p != null) {
        p.future.completeExceptionally(cause);
      }
    }
    LOG.debug("Connection to {} closed: {}", server, cause.getMessage());
  }

  @Override
  public void close() {
    abort(new ConnectionLostException("Connection to gpudirect server " + server
        + " was closed by the client", null));
    if (Thread.currentThread() != reader) {
      try {
        reader.join(2000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  static void writeFully(WritableByteChannel ch, ByteBuffer buf) throws IOException {
    while (buf.hasRemaining()) {
      ch.write(buf);
    }
  }

  static void closeQuietly(SocketChannel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // nothing left to do
      }
    }
  }
}
