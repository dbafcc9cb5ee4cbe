package io.gpudirect.client;

import io.gpudirect.GpuDirectException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The one retry policy of a client, for reads, stat, list and connecting: up to
 * {@link ClientConfig#maxRetries} more attempts after a {@link Failures#retryable} failure,
 * with exponential backoff from {@link ClientConfig#retryBackoff}; counted for
 * {@link TransferStats}.
 */
final class Retries {
  private final ClientConfig config;
  private final AtomicLong count = new AtomicLong();

  Retries(ClientConfig config) {
    this.config = config;
  }

  /** Whether attempt {@code attempt} (0 the first) may be followed by another. */
  boolean allowAfter(int attempt) {
    return attempt < config.maxRetries();
  }

  /** Whether the failure of attempt {@code attempt} earns another. */
  boolean allowAfter(int attempt, Throwable err) {
    return Failures.retryable(err) && allowAfter(attempt);
  }

  /** Counts one retry and says how long to wait before it. */
  long next(int attempt) {
    count.incrementAndGet();
    return config.retryBackoff().toNanos() << Math.min(attempt, 20);
  }

  /** As {@link #next}, waiting on this thread. */
  void sleepBeforeNext(int attempt) {
    long nanos = next(attempt);
    try {
      TimeUnit.NANOSECONDS.sleep(nanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new GpuDirectException("Interrupted while waiting to retry", e);
    }
  }

  long count() {
    return count.get();
  }
}
