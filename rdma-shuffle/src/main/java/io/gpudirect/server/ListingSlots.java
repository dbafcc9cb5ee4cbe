package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Bounds the listings a server walks at once. A page walk reads directories and {@code lstat}s
 * files: CPU and memory that a storm of LISTs would otherwise take from every other client
 * (each connection answers one request at a time, so a connection has at most one listing in
 * progress; its pipelined LISTs wait in its socket). A LIST that finds every slot taken waits,
 * in arrival order, up to the queue timeout, then is refused with {@code LIMIT_EXCEEDED}.
 */
final class ListingSlots {
  private final Semaphore slots;
  private final int max;
  private final Duration queueTimeout;

  ListingSlots(int max, Duration queueTimeout) {
    this.slots = new Semaphore(max, true);
    this.max = max;
    this.queueTimeout = queueTimeout;
  }

  /** A slot, held until closed; refused when none frees up within the queue timeout. */
  Slot acquire(String server, String requested) {
    boolean got;
    try {
      got = slots.tryAcquire(queueTimeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      got = false;
    }
    if (!got) {
      throw new RequestRefusedException(ErrorCode.LIMIT_EXCEEDED, "Server " + server
          + " is busy listing: " + max + " listings in progress (its maxConcurrentListings),"
          + " and the LIST of " + RootDirectory.show(requested) + " waited " + queueTimeout
          + " for one to end; retry later, or raise the server's --max-concurrent-listings");
    }
    return slots::release;
  }

  /** A held slot; closing it lets the next LIST in. */
  interface Slot extends AutoCloseable {
    @Override
    void close();
  }
}
