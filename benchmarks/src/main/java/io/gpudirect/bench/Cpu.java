package io.gpudirect.bench;

import java.lang.management.ManagementFactory;

/**
 * CPU time of this whole JVM (every thread: client, embedded server, GC, JIT), which is what
 * "CPU seconds per GB, client and server together" means when both run in this process.
 */
final class Cpu {
  private static final com.sun.management.OperatingSystemMXBean OS =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

  private Cpu() {}

  /** Nanoseconds of CPU used by this process so far. */
  static long processNanos() {
    return OS.getProcessCpuTime();
  }
}
