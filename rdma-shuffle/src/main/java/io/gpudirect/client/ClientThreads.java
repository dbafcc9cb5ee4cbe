package io.gpudirect.client;

import io.gpudirect.DaemonThreads;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The threads of one client: a timer for request timeouts, retries' backoff and retired
 * connections, and workers that complete callers' futures and send retries, so that neither
 * runs on a connection's reader thread. Daemons, named after the server; stopped by
 * {@link #close}.
 */
final class ClientThreads implements AutoCloseable {
  private final ScheduledThreadPoolExecutor timer;
  private final ExecutorService workers;

  ClientThreads(String serverName, Duration requestTimeout) {
    this.timer = new ScheduledThreadPoolExecutor(1,
        DaemonThreads.numbered("gpudirect-client-timer-" + serverName));
    this.timer.setRemoveOnCancelPolicy(true);
    // Every chunk schedules its timeout here. Whenever the new timeout is the earliest in the
    // queue, the timer thread is woken to wait for it instead: a context switch per chunk,
    // which cost a 4 KiB read 15-50% of its latency (docs/benchmarks.md). A no-op that always
    // comes due sooner than any timeout keeps the head of the queue, so the thread wakes for
    // it alone, at most once a second.
    long tick = Math.min(TimeUnit.SECONDS.toNanos(1), requestTimeout.toNanos());
    this.timer.scheduleAtFixedRate(() -> { }, tick, tick, TimeUnit.NANOSECONDS);
    this.workers = Executors.newCachedThreadPool(
        DaemonThreads.numbered("gpudirect-client-worker-" + serverName));
  }

  /** Runs {@code task} in {@code nanos}; null when the client is closing. */
  ScheduledFuture<?> schedule(Runnable task, long nanos) {
    try {
      return timer.schedule(task, nanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      return null;
    }
  }

  /** Runs {@code task} on a worker; on this thread when the client is closing. */
  void runWorker(Runnable task) {
    try {
      workers.execute(task);
    } catch (RejectedExecutionException e) {
      task.run();
    }
  }

  /** Completes off the connection's reader thread, so that callers' callbacks cannot stall it. */
  <T> CompletableFuture<T> onWorker(CompletableFuture<T> internal) {
    CompletableFuture<T> result = new CompletableFuture<>();
    internal.whenComplete((v, err) -> runWorker(() -> {
      if (err == null) {
        result.complete(v);
      } else {
        result.completeExceptionally(Failures.unwrap(err));
      }
    }));
    return result;
  }

  @Override
  public void close() {
    timer.shutdownNow();
    workers.shutdownNow();
    try {
      timer.awaitTermination(2, TimeUnit.SECONDS);
      workers.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
