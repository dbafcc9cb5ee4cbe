package io.gpudirect.transport.tcp;

import io.gpudirect.GpuDirectException;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.protocol.HelloAck;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.Request;
import io.gpudirect.protocol.ShuffleRead;
import io.gpudirect.tls.TlsChannel;
import io.gpudirect.transport.BlockMemory;
import io.gpudirect.transport.CallerReads;
import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionLostException;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.CorruptAnswerException;
import io.gpudirect.transport.PayloadMemory;
import io.gpudirect.transport.ReceivedWindow;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.SocketChannel;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A blocking TCP connection. Callers write requests ({@link RequestWriter}); answers are read
 * in order ({@link AnswerReader}) by whichever thread holds the reading role ({@link #reading}):
 * for READ_DATA, the payload goes straight from the socket into the caller's buffer, then its
 * CRC32C is checked. With TLS, everything goes through a {@link TlsChannel} ({@code wire})
 * instead, which decrypts payloads into the caller's buffer.
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
  /** How long without a request before the reader thread watches the socket (see above). */
  static final long IDLE_WATCH_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  /** A READ with the longest path and file id, and room to spare. */
  static final int OUTBOX_BYTES = 8 * 1024;

  private final SocketChannel channel;
  private final InetSocketAddress peer;
  private final String server;
  private final int maxReadLength;
  private final long capabilities;
  /**
   * Where requests are encoded and answers read through, charged to the transport's allocator
   * from the handshake until the reader thread ends (the connection failed or was closed).
   */
  private final HostBuffer outbox;
  private final HostBuffer inbox;
  private final AtomicBoolean buffersReleased = new AtomicBoolean();
  private final RequestWriter requests;
  private final OutstandingRequests outstanding;
  /** Only the holder of {@link #reading} uses it. */
  private final AnswerReader answers;
  private final Thread reader;
  /** Held by the one thread that reads answers now: the reader thread or a waiting caller. */
  private final AtomicBoolean reading = new AtomicBoolean();
  /** When the read a caller waits for while it reads answers times out (see CallerReads). */
  private volatile long callerDeadline = NO_DEADLINE;
  private volatile GpuDirectException failure;
  /** Set by {@link #closeWhenAnswered}: the holder of the role closes it when it lets go with every answer in. */
  private volatile boolean closeWhenAnswered;

  private TcpConnection(SocketChannel channel, ByteChannel wire, InetSocketAddress peer,
      HelloAck ack, String threadName, ConnectionThreads threads, BufferAllocator memory) {
    this.channel = channel;
    this.peer = peer;
    this.server = describe(peer);
    this.maxReadLength = ack.maxReadLength();
    this.capabilities = ack.capabilities();
    this.outbox = memory.allocate(OUTBOX_BYTES, "TCP outbox of the connection to gpudirect server " + server);
    try {
      this.inbox = memory.allocate(AnswerReader.INBOX_BYTES, "TCP inbox of the connection to gpudirect server "
          + server);
    } catch (RuntimeException e) {
      outbox.close();
      throw e;
    }
    this.requests = new RequestWriter(wire, outbox.nioBuffer());
    this.outstanding = new OutstandingRequests(server);
    this.answers = new AnswerReader(wire, inbox.nioBuffer(), server,
        (ack.capabilities() & Protocol.CAP_CRC32C) != 0, outstanding, threads);
    this.reader = new Thread(this::readerLoop, threadName);
    this.reader.setDaemon(true);
  }

  static String describe(InetSocketAddress a) {
    String host = a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
    return host + ":" + a.getPort();
  }

  /**
   * Connects and shakes hands (see {@link TcpHandshake}), then starts the reader thread; the
   * inbox and outbox are charged to {@code memory}.
   */
  static TcpConnection open(InetSocketAddress peer, ConnectionOptions options, ConnectionThreads threads,
      BufferAllocator memory) {
    TcpHandshake.Done done = TcpHandshake.connect(peer, options, threads);
    TcpConnection c = null;
    try {
      c = new TcpConnection(done.channel(), done.wire(), peer, done.ack(), options.threadName(), threads,
          memory);
      c.reader.start();
      return c;
    } catch (RuntimeException | Error e) {
      TcpHandshake.closeQuietly(done.channel());
      if (c != null) {
        c.releaseBuffers();
      }
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
    CompletableFuture<Object> f = send(PendingRequest.call(request.requestId()), request, false);
    return (CompletableFuture<Message>) (CompletableFuture<?>) f;
  }

  @Override
  public CompletableFuture<Void> read(ReadRequest request, ByteBuffer dst) {
    return send(PendingRequest.read(request, dst, false), request, false).thenApply(x -> null);
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
    CompletableFuture<?> f = send(PendingRequest.read(request, dst, false), request, true);
    return (CompletableFuture<Void>) f;
  }

  @Override
  public CompletableFuture<OptionalInt> readUnverified(ReadRequest request, ByteBuffer dst) {
    return send(PendingRequest.read(request, dst, true), request, false)
        .thenApply(crc -> crc == null ? OptionalInt.empty() : OptionalInt.of((Integer) crc));
  }

  @Override
  public CompletableFuture<Void> read(ReadRequest request, PayloadMemory dst) {
    return send(PendingRequest.read(request, dst, false), request, false).thenApply(x -> null);
  }

  @Override
  public CompletableFuture<OptionalInt> readUnverified(ReadRequest request, PayloadMemory dst) {
    return send(PendingRequest.read(request, dst, true), request, false)
        .thenApply(crc -> crc == null ? OptionalInt.empty() : OptionalInt.of((Integer) crc));
  }

  @Override
  @SuppressWarnings("unchecked")
  public CompletableFuture<ReceivedWindow> readBlock(ShuffleRead request, BlockMemory memory) {
    CompletableFuture<?> f = send(PendingRequest.block(request, memory), request, false);
    return (CompletableFuture<ReceivedWindow>) f;
  }

  /**
   * Sends a request. Unless its caller reads the answer itself, the reader thread is woken
   * when no one is reading; a thread that is reading reads this answer too, or wakes the
   * reader thread when it lets go (see {@link #releaseReading}).
   */
  private CompletableFuture<Object> send(PendingRequest p, Message request, boolean callerReads) {
    // Outstanding before the failure is looked at: a failure from now on fails it.
    outstanding.put(p);
    GpuDirectException f = failure;
    if (f != null) {
      outstanding.withdraw(p);
      p.future().completeExceptionally(f);
      return p.future();
    }
    outstanding.expect(p);
    try {
      requests.send(request);
    } catch (IOException e) {
      abort(new ConnectionLostException("Connection to gpudirect server " + server
          + " failed while sending a request: " + e, e));
    }
    if (!callerReads && !reading.get()) {
      LockSupport.unpark(reader);
    }
    return p.future();
  }

  /**
   * {@inheritDoc} Not on an interrupted thread: a socket channel that a blocked thread is
   * interrupted in closes itself, and this connection is shared; such a caller waits for the
   * reader thread instead. (An interrupt that arrives during the read still closes it: every
   * read outstanding on it then fails as on a lost connection, and the client retries them.)
   */
  @Override
  public void readAnswersUntil(CompletableFuture<?> done, long deadlineNanos) {
    if (done.isDone() || outstanding.due() == 0 || Thread.currentThread().isInterrupted()
        || !reading.compareAndSet(false, true)) {
      return;
    }
    callerDeadline = deadlineNanos;
    try {
      while (!done.isDone() && outstanding.due() > 0 && failure == null) {
        answers.readAnswer();
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
    try {
      readAnswersWhileOpen();
    } finally {
      releaseBuffers();
    }
  }

  /**
   * The connection's inbox and outbox go back, once: it failed and its reader is done, or it
   * was closed (a reader still winding down touches memory the JVM keeps while it does).
   */
  private void releaseBuffers() {
    if (buffersReleased.compareAndSet(false, true)) {
      inbox.close();
      outbox.close();
    }
  }

  private void readAnswersWhileOpen() {
    long sendsSeen = -1;
    while (failure == null) {
      boolean idle = outstanding.due() == 0;
      long sent = requests.sends();
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
          answers.readAnswer();
        }
        while (outstanding.due() > 0 && failure == null) {
          answers.readAnswer();
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
    } else if (outstanding.due() > 0) {
      LockSupport.unpark(reader);
    } else {
      closeIfAnswered();
    }
  }

  /**
   * {@inheritDoc} Every answer is in when none is due and no payload is arriving (see
   * {@link OutstandingRequests#allAnswered}): looked at here, and by each holder of the reading
   * role as it lets go. Either this call finds them in, or the holder, which reads the flag
   * after its last answer is in, does. A request sent meanwhile (on a connection its sender took
   * just before it was retired) is either due before that look, and then answered before the
   * close, or outstanding when the close fails everything outstanding, or sent after it and
   * failed at once (see {@link #send}): never left without an answer.
   */
  @Override
  public boolean closeWhenAnswered() {
    closeWhenAnswered = true;
    closeIfAnswered();
    return true;
  }

  private void closeIfAnswered() {
    if (closeWhenAnswered && failure == null && outstanding.allAnswered()) {
      abort(new ConnectionLostException("Connection to gpudirect server " + server
          + " was closed by the client once the answers sent on it were in", null));
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

  @Override
  public void abort(GpuDirectException cause) {
    synchronized (this) {
      if (failure != null) {
        return;
      }
      failure = cause;
    }
    TcpHandshake.closeQuietly(channel);
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
    TcpHandshake.closeQuietly(channel);
    outstanding.failAll(cause);
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
    releaseBuffers();
  }
}
