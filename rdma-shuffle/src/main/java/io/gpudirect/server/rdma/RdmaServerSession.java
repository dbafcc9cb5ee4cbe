package io.gpudirect.server.rdma;

import io.gpudirect.DaemonThreads;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.RdmaBind;
import io.gpudirect.protocol.RdmaBound;
import io.gpudirect.protocol.RdmaRead;
import io.gpudirect.protocol.RdmaReadDone;
import io.gpudirect.protocol.RdmaShuffleDone;
import io.gpudirect.protocol.RdmaShuffleRead;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.verbs.Access;
import io.gpudirect.verbs.CompletionHandler;
import io.gpudirect.verbs.ControlSlots;
import io.gpudirect.verbs.MemoryRegion;
import io.gpudirect.verbs.RdmaEndpoint;
import io.gpudirect.verbs.WorkCompletion;
import io.gpudirect.verbs.WorkRequestTag;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server end of one queue pair. It starts unbound, holding nothing but one small receive
 * for the RDMA_BIND its peer must send first: a peer that has not proven itself gets no
 * registered chunks, no control slots, no worker and no key of its unpacked. A BIND with a
 * token the service offered to an authenticated TCP connection takes that offer's memory
 * ({@link SessionMemory}, reserved when the offer was made) and admits the peer; anything else
 * closes it. Then each RDMA_READ (a file range) and RDMA_SHUFFLE_READ (a window of a shuffle
 * block) is served, in arrival order, on this session's worker: the bytes go chunk by chunk
 * into registered host memory and out as RDMA WRITEs to the client's address and rkey, several
 * chunks in flight; then an RDMA_READ_DONE or RDMA_SHUFFLE_DONE (with the CRC32C) is sent on the
 * same queue pair, which RC ordering delivers after the data.
 *
 * <p>A failed work completion breaks the queue pair: the session logs it with the client and
 * what failed, stops, and frees its memory when its TCP connection ends (or the server closes).
 */
final class RdmaServerSession {
  private static final Logger LOG = LoggerFactory.getLogger(RdmaServerSession.class);
  /** Holds an RDMA_BIND frame (header and token) with room to spare. */
  static final int BIND_SLOT_BYTES = 64;

  private final RdmaService service;
  private final RdmaEndpoint endpoint;
  private final String client;
  private final RdmaService.Settings settings;
  /** Until bound: the one receive a peer gets. Null once bound. Guarded by this. */
  private ControlSlots bindSlot;
  /** Set once, when bound (on the completion thread, before the peer's next message). */
  private volatile Bound bound;
  private volatile RdmaService.Offer offer;
  private volatile String failure;
  /** Reads whose answer is posted in a send slot, ended when that SEND completes. */
  private final java.util.Map<Integer, ServedFiles.FileRange> answered = new java.util.concurrent.ConcurrentHashMap<>();
  private boolean errorReported;
  private boolean released;

  /** What a bound session serves with: the offer's memory, registered, and its worker. */
  private record Bound(SessionMemory memory, ControlSlots slots, MemoryRegion chunkRegion,
      ArrayBlockingQueue<Integer> freeChunks, ExecutorService worker) {}

  RdmaServerSession(RdmaService service, RdmaEndpoint endpoint, BufferAllocator bindAllocator) {
    this.service = service;
    this.endpoint = endpoint;
    this.client = "client " + RdmaEndpoint.describe(endpoint.peer());
    this.settings = service.settings();
    ControlSlots slot = new ControlSlots(endpoint, bindAllocator, 1, 0, BIND_SLOT_BYTES);
    try {
      slot.postRecv(endpoint, 0, WorkRequestTag.BIND.id(0));
    } catch (RuntimeException e) {
      slot.close();
      throw e;
    }
    this.bindSlot = slot;
  }

  RdmaEndpoint endpoint() {
    return endpoint;
  }

  CompletionHandler completions() {
    return new CompletionHandler() {
      @Override
      public void onCompletion(WorkCompletion wc) {
        handle(wc);
      }

      @Override
      public void onDisconnected(String reason) {
        if (bound == null) {
          // Before its BIND: the peer left, or the provider refused a frame (a key, a WRITE).
          service.refuse(RdmaServerSession.this, reason);
          return;
        }
        stop(client + " disconnected: " + reason, false);
      }
    };
  }

  private void handle(WorkCompletion wc) {
    WorkRequestTag kind = WorkRequestTag.of(wc.wrId());
    if (!wc.ok()) {
      // A flush is the consequence of a break (often the client closing), not its cause.
      stop(WorkRequestTag.describe(wc.wrId()) + " failed: " + wc.describe(),
          wc.status() != WorkCompletion.Status.FLUSHED && bound != null);
      return;
    }
    if (kind == WorkRequestTag.BIND) {
      bind(wc.byteLength());
      return;
    }
    Bound b = bound;
    int slot = WorkRequestTag.slot(wc.wrId());
    if (kind == WorkRequestTag.WRITE) {
      b.freeChunks().add(slot);
      return;
    }
    if (kind == WorkRequestTag.SEND) {
      ServedFiles.FileRange range = answered.remove(slot);
      if (range != null) {
        range.close();
      }
      b.slots().releaseSendSlot(slot);
      return;
    }
    if (failure != null) {
      // Stopped: nothing more is served, and the slots may already be closed.
      return;
    }
    Message m;
    try {
      m = b.slots().received(slot, wc.byteLength());
      b.slots().postRecv(endpoint, slot, WorkRequestTag.RECV.id(slot));
    } catch (RuntimeException e) {
      stop("bad message from " + client + ": " + e.getMessage(), true);
      return;
    }
    Runnable serving = m instanceof RdmaRead r ? () -> serve(r)
        : m instanceof RdmaShuffleRead r ? () -> serve(r) : null;
    if (serving != null) {
      try {
        b.worker().execute(serving);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        // closing
      }
    } else {
      stop("unexpected " + m.type() + " from " + client + " on the queue pair", true);
    }
  }

  /**
   * The first message arrived. Only a BIND whose token the service offered binds; whatever else
   * came is counted as a refusal (never logged one by one: strangers can send it at will) and
   * closes the queue pair.
   */
  private void bind(int byteLength) {
    RdmaService.Binding o;
    try {
      Message m;
      synchronized (this) {
        if (bindSlot == null) {
          return;
        }
        m = bindSlot.received(0, byteLength);
      }
      o = m instanceof RdmaBind b ? service.bind(b.token(), this) : null;
      if (o == null && !(m instanceof RdmaBind)) {
        service.refuse(this, "its first message was " + m.type());
        return;
      }
    } catch (RuntimeException e) {
      service.refuse(this, e.getMessage());
      return;
    }
    if (o == null) {
      return;
    }
    offer = o.offer();
    SessionMemory memory = o.memory();
    // The provider may touch the memory until its endpoint is released, after this session is
    // closed: it holds the memory until then.
    memory.holdUntil(endpoint.released());
    ControlSlots slots = null;
    MemoryRegion region = null;
    try {
      region = endpoint.register(memory.chunks().nioBuffer(), EnumSet.of(Access.LOCAL_WRITE));
      slots = new ControlSlots(endpoint, memory.slots(), settings.credits() + 1, settings.credits(),
          settings.slotBytes());
      for (int i = 0; i <= settings.credits(); i++) {
        slots.postRecv(endpoint, i, WorkRequestTag.RECV.id(i));
      }
    } catch (RuntimeException e) {
      if (slots != null) {
        slots.close();
      }
      if (region != null) {
        region.close();
      }
      memory.close();
      stop("cannot set up the queue pair of " + client + ": " + e.getMessage(), true);
      return;
    }
    ArrayBlockingQueue<Integer> free = new ArrayBlockingQueue<>(settings.chunks());
    for (int i = 0; i < settings.chunks(); i++) {
      free.add(i);
    }
    ExecutorService worker = worker(memory);
    boolean closed;
    synchronized (this) {
      closed = released;
      if (!closed) {
        bound = new Bound(memory, slots, region, free, worker);
        // The BIND's receive completed: nothing is posted in its slot any more.
        bindSlot.close();
        bindSlot = null;
      }
    }
    if (closed) {
      worker.shutdownNow();
      slots.close();
      region.close();
      memory.close();
      return;
    }
    endpoint.admit();
    LOG.debug("RDMA queue pair from {} bound to its TCP connection", client);
    try {
      // Every send slot is free: nothing was sent on this queue pair before.
      int slot = slots.takeSendSlot();
      slots.postSend(endpoint, slot, WorkRequestTag.SEND.id(slot), new RdmaBound());
    } catch (RuntimeException e) {
      stop("cannot tell " + client + " its queue pair is bound: " + e.getMessage(), true);
      return;
    }
    if (failure != null) {
      // Its TCP connection ended while this was set up: free what it just took.
      close();
    }
  }

  /**
   * The session's single worker thread, which reads files into the chunks: it holds the memory
   * until it has ended, which may be after the session's close gave up waiting.
   */
  private ExecutorService worker(SessionMemory memory) {
    SessionMemory.Held byWorker = memory.hold();
    return new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
        DaemonThreads.named("gpudirect-server-rdma-" + RdmaEndpoint.describe(endpoint.peer()))) {
      @Override
      protected void terminated() {
        byWorker.close();
      }
    };
  }

  private void serve(RdmaRead r) {
    ServedFiles.FileRange range;
    try {
      range = offer.files.open(r.path(), r.version(), r.offset(), r.length());
    } catch (ReadRefusedException e) {
      answer(new ErrorResponse(r.requestId(), e.code(), e.getMessage()));
      return;
    }
    put(r.requestId(), range, r.length(), r.remoteAddress(), r.rkey(), "Cannot read " + r.path()
        + " at offset " + r.offset() + " for RDMA",
        offer.crc, crc -> new RdmaReadDone(r.requestId(), r.length(), crc != null, crc == null ? 0 : crc));
  }

  /** A window of a shuffle block: found and checked as over TCP, then put as a file range is. */
  private void serve(RdmaShuffleRead r) {
    ServedFiles.BlockRange range;
    try {
      range = offer.files.openBlock(r.read(), offer.crc);
    } catch (ReadRefusedException e) {
      answer(new ErrorResponse(r.requestId(), e.code(), e.getMessage()));
      return;
    }
    ShuffleData window = range.header();
    // With Spark's checksums in the header the client checks the bytes against those: no CRC32C.
    put(r.requestId(), range, window.length(), r.remoteAddress(), r.rkey(), "Cannot read shuffle block "
        + r.read().block().name() + " from byte " + window.offset() + " for RDMA",
        offer.crc && !window.checks().present(),
        crc -> new RdmaShuffleDone(window, crc != null, crc == null ? 0 : crc));
  }

  /**
   * Puts the {@code length} bytes of {@code range} at {@code remoteAddress} of the client's region
   * {@code rkey}, chunk by chunk, then answers {@code done} of their CRC32C (null without one,
   * {@code checksum} false); or an ERROR for request {@code id}, where a read fails as
   * {@code what}. Closes the range.
   */
  private void put(long id, ServedFiles.FileRange range, int length, long remoteAddress, int rkey,
      String what, boolean checksum, Function<Integer, Message> done) {
    CRC32C crc = checksum ? new CRC32C() : null;
    boolean handedOver = false;
    Bound b = bound;
    try {
      ByteBuffer memory = b.memory().chunks().nioBuffer();
      long written = 0;
      while (written < length) {
        Integer chunk = nextChunk(b.freeChunks());
        if (chunk == null) {
          return;
        }
        int n = (int) Math.min(settings.chunkBytes(), length - written);
        int at = chunk * settings.chunkBytes();
        ByteBuffer view = memory.duplicate().position(at).limit(at + n).slice();
        range.readFully(written, view);
        if (crc != null) {
          crc.update(view.flip());
        }
        endpoint.postWrite(WorkRequestTag.WRITE.id(chunk), b.chunkRegion(), at, n, remoteAddress + written, rkey);
        range.sent(n);
        written += n;
      }
      // The CRC is of the bytes written, so it matches a mix of two versions just as well:
      // only this check after the last read of the file tells the client not to use them.
      range.checkUnchanged();
      // The read stays in flight (for a draining server) until its answer has gone out.
      handedOver = answer(done.apply(crc == null ? null : (int) crc.getValue()), range);
    } catch (ReadRefusedException e) {
      // The WRITEs have landed; the client fails the whole read on this answer.
      answer(new ErrorResponse(id, e.code(), e.getMessage()));
    } catch (java.io.IOException e) {
      // Some WRITEs may have landed; the client fails the whole read on this answer.
      answer(new ErrorResponse(id, ErrorCode.IO_ERROR, what + ": " + e));
    } catch (RuntimeException e) {
      stop("serving request " + id + " for " + client + ": " + e, true);
    } finally {
      if (!handedOver) {
        range.close();
      }
    }
  }

  /** A free chunk: its previous WRITE has completed. Null once the session failed. */
  private Integer nextChunk(ArrayBlockingQueue<Integer> freeChunks) {
    try {
      while (failure == null) {
        Integer c = freeChunks.poll(100, TimeUnit.MILLISECONDS);
        if (c != null) {
          return c;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return null;
  }

  private void answer(Message m) {
    answer(m, null);
  }

  /**
   * Posts {@code m}; {@code range}, when given, is closed once the SEND has completed (or the
   * queue pair has broken). Returns whether the range was handed over that way.
   */
  private boolean answer(Message m, ServedFiles.FileRange range) {
    int slot = -1;
    ControlSlots slots = bound.slots();
    try {
      while (failure == null && (slot = slots.awaitSendSlot(100)) < 0) {
        // the client's next request may come before the completion of our last answer
      }
      if (slot < 0) {
        return false;
      }
      if (range != null) {
        answered.put(slot, range);
      }
      slots.postSend(endpoint, slot, WorkRequestTag.SEND.id(slot), m);
      if (failure != null) {
        closeAnswered();
      }
      return range != null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      stop("cannot post an answer to " + client + ": " + e, true);
    }
    // Not posted: the caller still owns the range (unless a failure has closed it already).
    return range != null && slot >= 0 && answered.remove(slot) == null;
  }

  /** Ends the reads whose answers were posted; idempotent (each range is taken once). */
  private void closeAnswered() {
    for (Integer slot : answered.keySet()) {
      ServedFiles.FileRange r = answered.remove(slot);
      if (r != null) {
        r.close();
      }
    }
  }

  /**
   * The queue pair is broken or done: no more work; memory is freed in {@link #close}. A flush
   * (not an error of its own) may come out of the completion queue before the error that
   * caused it, so a later error is still logged and counted once. An unbound queue pair has
   * nobody else to free it, so it is closed here.
   */
  private void stop(String why, boolean error) {
    boolean first;
    synchronized (this) {
      first = failure == null;
      if (first) {
        failure = why;
      }
      if (error && errorReported) {
        error = false;
      } else if (error) {
        errorReported = true;
      }
    }
    Bound b = bound;
    if (b == null) {
      if (first) {
        LOG.debug("Unbound RDMA queue pair from {} ended: {}", client, why);
      }
      close();
      return;
    }
    if (error) {
      LOG.warn("RDMA queue pair from {} failed: {}", client, why);
      RdmaService.Offer o = offer;
      if (o != null) {
        o.files.failed(why);
      }
    } else if (first) {
      LOG.debug("RDMA queue pair from {} ended: {}", client, why);
    }
    if (first) {
      endpoint.close();
      b.worker().shutdownNow();
    }
    closeAnswered();
  }

  /** Stops and frees what this session holds, once nothing can touch it any more. Idempotent. */
  void close() {
    ControlSlots unbound;
    synchronized (this) {
      if (failure == null) {
        failure = "closed by the server";
      }
      if (released) {
        return;
      }
      released = true;
      unbound = bindSlot;
      bindSlot = null;
    }
    endpoint.close();
    Bound b = bound;
    if (b != null) {
      b.worker().shutdownNow();
      try {
        b.worker().awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      closeAnswered();
      b.chunkRegion().close();
      b.slots().close();
      b.memory().close();
    }
    if (unbound != null) {
      unbound.close();
    }
    service.ended(this);
  }
}
