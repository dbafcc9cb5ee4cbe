package io.gpudirect.remote;

/**
 * Bytes and wait time fetched by the current thread. A Spark task reads a partition on one
 * thread, so a partition reader takes the difference of two snapshots to report what its
 * own reads cost, whichever file streams or channels did the reading.
 */
public final class TaskFetchCounters {
  private static final ThreadLocal<long[]> COUNTERS = ThreadLocal.withInitial(() -> new long[2]);

  private TaskFetchCounters() {}

  public static void record(long bytes, long nanos) {
    long[] c = COUNTERS.get();
    c[0] += bytes;
    c[1] += nanos;
  }

  /** Bytes fetched by this thread so far. */
  public static long bytes() {
    return COUNTERS.get()[0];
  }

  /** Nanoseconds this thread spent waiting for fetched bytes so far. */
  public static long nanos() {
    return COUNTERS.get()[1];
  }
}
