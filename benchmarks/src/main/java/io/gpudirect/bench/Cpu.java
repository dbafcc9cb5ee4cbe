package io.gpudirect.bench;

import java.lang.management.ManagementFactory;
import java.time.Duration;

/**
 * CPU time of this whole JVM (every thread: client, embedded server, GC, JIT), which is what
 * "CPU seconds per GB, client and server together" means when both run in this process; and of
 * a child process, such as a server that runs in a JVM of its own as a storage host would.
 */
public final class Cpu {
  private static final com.sun.management.OperatingSystemMXBean OS =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

  private Cpu() {}

  /** Nanoseconds of CPU used by this process so far. */
  public static long processNanos() {
    return OS.getProcessCpuTime();
  }

  /** Nanoseconds of CPU used by {@code child} so far; 0 where the OS does not say. */
  public static long processNanos(ProcessHandle child) {
    return child.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
  }
}
