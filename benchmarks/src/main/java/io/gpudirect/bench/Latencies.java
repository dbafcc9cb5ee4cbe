package io.gpudirect.bench;

import java.util.Arrays;

/** Round-trip times of one kind of request, in nanoseconds, and their percentiles. */
final class Latencies {
  private long[] samples = new long[1024];
  private int count;

  void add(long nanos) {
    if (count == samples.length) {
      samples = Arrays.copyOf(samples, count * 2);
    }
    samples[count++] = nanos;
  }

  void addAll(Latencies other) {
    for (int i = 0; i < other.count; i++) {
      add(other.samples[i]);
    }
  }

  int count() {
    return count;
  }

  /** The {@code p}-th percentile (0..100) in microseconds, nearest rank; 0 with no samples. */
  double percentileMicros(double p) {
    if (count == 0) {
      return 0;
    }
    long[] sorted = Arrays.copyOf(samples, count);
    Arrays.sort(sorted);
    int rank = (int) Math.ceil(p / 100.0 * count);
    return sorted[Math.max(0, Math.min(count - 1, rank - 1))] / 1e3;
  }
}
