package io.gpudirect.transport;

import io.gpudirect.DaemonThreads;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The threads a client's connections share, TCP and RDMA alike: a pool, one thread per core
 * at most (started as work comes), that checks large payloads' CRC32C off the connections'
 * reader threads; and one timer that closes the sockets of handshakes past their deadline.
 * Owned by whoever embeds the client ({@code client.ClientContext}) and closed by it, after
 * the connections that use it.
 */
public final class ConnectionThreads implements AutoCloseable {
  private final ExecutorService checksums;
  private final ScheduledThreadPoolExecutor deadlines;

  public ConnectionThreads() {
    this.checksums = Executors.newFixedThreadPool(
        Math.max(2, Runtime.getRuntime().availableProcessors()), DaemonThreads.named("gpudirect-crc-verify"));
    this.deadlines = new ScheduledThreadPoolExecutor(1, DaemonThreads.named("gpudirect-handshake-deadline"));
    this.deadlines.setRemoveOnCancelPolicy(true);
  }

  /** Checks a checksum on the pool; on the calling thread once the pool is closed. */
  public void verify(Runnable check) {
    try {
      checksums.execute(check);
    } catch (RejectedExecutionException e) {
      check.run();
    }
  }

  /**
   * Runs {@code atDeadline} in {@code millis} unless cancelled first. Throws
   * {@link IllegalStateException} once closed: no connection may start without its deadline.
   */
  public ScheduledFuture<?> deadline(Runnable atDeadline, long millis) {
    try {
      return deadlines.schedule(atDeadline, millis, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      throw new IllegalStateException("the client's connection threads are closed", e);
    }
  }

  /** Stops both; checks already running finish, later ones run on their callers' threads. */
  @Override
  public void close() {
    checksums.shutdown();
    deadlines.shutdownNow();
  }
}
