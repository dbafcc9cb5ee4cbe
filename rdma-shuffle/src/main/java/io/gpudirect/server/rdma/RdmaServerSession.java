package io.gpudirect.server.rdma;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.RdmaBind;
import io.gpudirect.protocol.RdmaRead;
import io.gpudirect.protocol.RdmaReadDone;
import io.gpudirect.verbs.Access;
import io.gpudirect.verbs.CompletionHandler;
import io.gpudirect.verbs.ControlSlots;
import io.gpudirect.verbs.MemoryRegion;
import io.gpudirect.verbs.RdmaEndpoint;
import io.gpudirect.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server end of one queue pair. Its first message must be an RDMA_BIND with a token the
 * service offered; then each RDMA_READ is served, in arrival order, on this session's worker:
 * the file range goes chunk by chunk into registered host memory and out as RDMA WRITEs to the
 * client's address and rkey, several chunks in flight; then an RDMA_READ_DONE (with the
 * CRC32C) is sent on the same queue pair, which RC ordering delivers after the data.
 *
 * <p>A failed work completion breaks the queue pair: the session logs it with the client and
 * what failed, stops, and frees its memory when its TCP connection ends (or the server closes).
 */
final class RdmaServerSession {
  private static final Logger LOG = LoggerFactory.getLogger(RdmaServerSession.class);
  private static final long RECV = 1L << 56;
  private static final long SEND = 2L << 56;
  private static final long WRITE = 3L << 56;
  private static final long SLOT_MASK = (1L << 56) - 1;

  private final RdmaService service;
  private final RdmaEndpoint endpoint;
  private final String client;
  private final RdmaService.Settings settings;
  private final ControlSlots slots;
  private final HostBuffer chunkMemory;
  private final MemoryRegion chunkRegion;
  private final ArrayBlockingQueue<Integer> freeChunks;
  private final ExecutorService worker;
  private volatile RdmaService.Offer offer;
  private volatile String failure;
  /** Reads whose answer is posted in a send slot, ended when that SEND completes. */
  private final java.util.Map<Integer, ServedFiles.FileRange> answered = new java.util.concurrent.ConcurrentHashMap<>();
  private boolean errorReported;
  private boolean released;

  RdmaServerSession(RdmaService service, RdmaEndpoint endpoint, BufferAllocator allocator) {
    this.service = service;
    this.endpoint = endpoint;
    this.client = "client " + RdmaEndpoint.describe(endpoint.peer());
    this.settings = service.settings();
    int recvSlots = settings.credits() + 1;
    this.slots = new ControlSlots(endpoint, allocator, recvSlots, settings.credits(), settings.slotBytes());
    HostBuffer chunks = null;
    MemoryRegion region = null;
    try {
      chunks = allocator.allocate(Math.multiplyExact(settings.chunks(), settings.chunkBytes()));
      region = endpoint.register(chunks.nioBuffer(), EnumSet.of(Access.LOCAL_WRITE));
      for (int i = 0; i < recvSlots; i++) {
        slots.postRecv(endpoint, i, RECV | i);
      }
    } catch (RuntimeException e) {
      if (region != null) {
        region.close();
      }
      if (chunks != null) {
        chunks.close();
      }
      slots.close();
      throw e;
    }
    this.chunkMemory = chunks;
    this.chunkRegion = region;
    this.freeChunks = new ArrayBlockingQueue<>(settings.chunks());
    for (int i = 0; i < settings.chunks(); i++) {
      freeChunks.add(i);
    }
    this.worker = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "gpudirect-server-rdma-" + RdmaEndpoint.describe(endpoint.peer()));
      t.setDaemon(true);
      return t;
    });
  }

  boolean isBound() {
    return offer != null;
  }

  CompletionHandler completions() {
    return new CompletionHandler() {
      @Override
      public void onCompletion(WorkCompletion wc) {
        handle(wc);
      }

      @Override
      public void onDisconnected(String reason) {
        stop(client + " disconnected: " + reason, false);
      }
    };
  }

  private void handle(WorkCompletion wc) {
    if (!wc.ok()) {
      // A flush is the consequence of a break (often the client closing), not its cause.
      long failedKind = wc.wrId() & ~SLOT_MASK;
      String request = failedKind == WRITE ? "RDMA WRITE into the client's memory"
          : failedKind == SEND ? "SEND of an answer" : "receive";
      stop(request + " failed: " + wc.describe(),
          wc.status() != WorkCompletion.Status.FLUSHED);
      return;
    }
    long kind = wc.wrId() & ~SLOT_MASK;
    int slot = (int) (wc.wrId() & SLOT_MASK);
    if (kind == WRITE) {
      freeChunks.add(slot);
      return;
    }
    if (kind == SEND) {
      ServedFiles.FileRange range = answered.remove(slot);
      if (range != null) {
        range.close();
      }
      slots.releaseSendSlot(slot);
      return;
    }
    Message m;
    try {
      m = slots.received(slot, wc.byteLength());
      slots.postRecv(endpoint, slot, RECV | slot);
    } catch (RuntimeException e) {
      stop("bad message from " + client + ": " + e.getMessage(), true);
      return;
    }
    if (offer == null) {
      if (m instanceof RdmaBind b && (offer = service.take(b.token(), this)) != null) {
        LOG.debug("RDMA queue pair from {} bound to its TCP connection", client);
        return;
      }
      stop(client + " sent " + m.type() + " before a valid RDMA_BIND", true);
      return;
    }
    if (m instanceof RdmaRead r) {
      try {
        worker.execute(() -> serve(r));
      } catch (java.util.concurrent.RejectedExecutionException e) {
        // closing
      }
    } else {
      stop("unexpected " + m.type() + " from " + client + " on the queue pair", true);
    }
  }

  private void serve(RdmaRead r) {
    ServedFiles.FileRange range;
    try {
      range = offer.files.open(r.path(), r.version(), r.offset(), r.length());
    } catch (ReadRefusedException e) {
      answer(new ErrorResponse(r.requestId(), e.code(), e.getMessage()));
      return;
    }
    CRC32C crc = offer.crc ? new CRC32C() : null;
    boolean handedOver = false;
    try {
      ByteBuffer memory = chunkMemory.nioBuffer();
      long done = 0;
      while (done < r.length()) {
        Integer chunk = nextChunk();
        if (chunk == null) {
          return;
        }
        int n = (int) Math.min(settings.chunkBytes(), r.length() - done);
        int at = chunk * settings.chunkBytes();
        ByteBuffer view = memory.duplicate().position(at).limit(at + n).slice();
        range.readFully(done, view);
        if (crc != null) {
          crc.update(view.flip());
        }
        endpoint.postWrite(WRITE | chunk, chunkRegion, at, n, r.remoteAddress() + done, r.rkey());
        range.sent(n);
        done += n;
      }
      // The CRC is of the bytes written, so it matches a mix of two versions just as well:
      // only this check after the last read of the file tells the client not to use them.
      range.checkUnchanged();
      // The read stays in flight (for a draining server) until its answer has gone out.
      handedOver = answer(new RdmaReadDone(r.requestId(), r.length(), crc != null,
          crc == null ? 0 : (int) crc.getValue()), range);
    } catch (ReadRefusedException e) {
      // The WRITEs have landed; the client fails the whole read on this answer.
      answer(new ErrorResponse(r.requestId(), e.code(), e.getMessage()));
    } catch (java.io.IOException e) {
      // Some WRITEs may have landed; the client fails the whole read on this answer.
      answer(new ErrorResponse(r.requestId(), ErrorCode.IO_ERROR, "Cannot read " + r.path()
          + " at offset " + r.offset() + " for RDMA: " + e));
    } catch (RuntimeException e) {
      stop("serving request " + r.requestId() + " for " + client + ": " + e, true);
    } finally {
      if (!handedOver) {
        range.close();
      }
    }
  }

  /** A free chunk: its previous WRITE has completed. Null once the session failed. */
  private Integer nextChunk() {
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
      slots.postSend(endpoint, slot, SEND | slot, m);
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
   * caused it, so a later error is still logged and counted once.
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
      worker.shutdownNow();
    }
    closeAnswered();
  }

  /** Stops and frees the registered memory, once nothing can touch it any more. */
  void close() {
    stop("closed by the server", false);
    synchronized (this) {
      if (released) {
        return;
      }
      released = true;
    }
    endpoint.close();
    try {
      worker.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    chunkRegion.close();
    chunkMemory.close();
    slots.close();
    service.ended(this);
  }
}
