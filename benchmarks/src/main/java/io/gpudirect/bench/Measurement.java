package io.gpudirect.bench;

/**
 * What one run moved and what it cost: bytes in wall seconds, with the CPU seconds of client
 * and server together. Runs of the same thing add up ({@link #plus}) across rounds.
 */
record Measurement(long bytes, double seconds, double cpuSeconds) {
  static final Measurement NONE = new Measurement(0, 0, 0);

  Measurement plus(Measurement o) {
    return new Measurement(bytes + o.bytes, seconds + o.seconds, cpuSeconds + o.cpuSeconds);
  }

  double gbitPerSecond() {
    return seconds > 0 ? bytes * 8 / seconds / 1e9 : 0;
  }

  double megabytesPerSecond() {
    return seconds > 0 ? bytes / seconds / 1e6 : 0;
  }

  /** CPU seconds per gigabyte (1e9 bytes) moved. */
  double cpuSecondsPerGb() {
    return bytes > 0 ? cpuSeconds / (bytes / 1e9) : 0;
  }

  /** Measures {@code work}, which returns the bytes it moved, with wall and process CPU time. */
  static Measurement of(ByteWork work) throws Exception {
    long cpu = Cpu.processNanos();
    long start = System.nanoTime();
    long bytes = work.run();
    long wall = System.nanoTime() - start;
    return new Measurement(bytes, wall / 1e9, (Cpu.processNanos() - cpu) / 1e9);
  }

  /** Work that moves bytes and says how many. */
  @FunctionalInterface
  interface ByteWork {
    long run() throws Exception;
  }
}
