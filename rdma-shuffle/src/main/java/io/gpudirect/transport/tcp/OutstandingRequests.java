package io.gpudirect.transport.tcp;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.ProtocolException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The requests of one connection whose answers have not been taken yet, by request id, and
 * how many answers are due; when the connection fails, every one of them fails with its cause
 * (the one whose payload is arriving too).
 */
final class OutstandingRequests {
  private final String server;
  private final Map<Long, PendingRequest> pending = new ConcurrentHashMap<>();
  /** Answers due: requests sent whose answer has not been taken yet. */
  private final AtomicInteger due = new AtomicInteger();
  /** Of those, the small ones (see {@link PendingRequest#small}). */
  private final AtomicInteger smallDue = new AtomicInteger();
  /**
   * The read whose payload is being received, from its answer's header until its trailer is in;
   * it is no longer in {@link #pending}.
   */
  private volatile PendingRequest receiving;

  OutstandingRequests(String server) {
    this.server = server;
  }

  /** {@code p} waits for its answer, which a failure from now on fails (see {@link #failAll}). */
  void put(PendingRequest p) {
    pending.put(p.requestId(), p);
  }

  /** {@code p}, put a moment ago, is not sent after all (the connection failed first). */
  void withdraw(PendingRequest p) {
    pending.remove(p.requestId());
  }

  /** {@code p} is about to be sent: its answer is due. */
  void expect(PendingRequest p) {
    if (p.small()) {
      smallDue.incrementAndGet();
    }
    due.incrementAndGet();
  }

  int due() {
    return due.get();
  }

  /** Whether a small answer is due, which a read may take whole (see AnswerReader). */
  boolean smallDue() {
    return smallDue.get() > 0;
  }

  /**
   * Whether every answer due is in: none due, and no payload arriving. The settling of the last
   * one (its future completed, its checksum checked on the pool) may still follow; it needs the
   * connection no more.
   */
  boolean allAnswered() {
    // Due first: a payload's request is receiving before it stops being due (see takeToReceive).
    return due.get() == 0 && receiving == null;
  }

  /** The request {@code m} answers, no longer outstanding. */
  PendingRequest take(long requestId, Message m) {
    return take(requestId, m, false);
  }

  /**
   * As {@link #take}, for an answer whose payload follows: the request is {@code receiving}
   * before it stops being due, so that {@link #allAnswered} never finds it neither due nor arriving.
   */
  PendingRequest takeToReceive(long requestId, Message m) {
    return take(requestId, m, true);
  }

  private PendingRequest take(long requestId, Message m, boolean payload) {
    PendingRequest p = pending.remove(requestId);
    if (p == null) {
      throw new ProtocolException("Server " + server + " sent " + m.type()
          + " for unknown request " + requestId);
    }
    if (payload) {
      receiving = p;
    }
    if (p.small()) {
      smallDue.decrementAndGet();
    }
    due.decrementAndGet();
    return p;
  }

  /** The payload being received is in, its trailer too: a connection lost from now on leaves its read alone. */
  void received() {
    receiving = null;
  }

  /** Fails every request still waiting for its answer. */
  void failAll(GpuDirectException cause) {
    PendingRequest r = receiving;
    if (r != null) {
      r.future().completeExceptionally(cause);
    }
    for (Long id : pending.keySet()) {
      PendingRequest p = pending.remove(id);
      if (p != null) {
        p.future().completeExceptionally(cause);
      }
    }
  }
}
