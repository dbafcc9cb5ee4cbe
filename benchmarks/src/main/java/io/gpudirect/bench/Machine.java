package io.gpudirect.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** One line about the machine a bench ran on: CPU model, cores, memory, OS, JVM, TCP congestion control. */
final class Machine {
  private Machine() {}

  static String describe() {
    String cpu = "unknown CPU";
    try {
      cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream()
          .filter(l -> l.startsWith("model name")).findFirst()
          .map(l -> l.substring(l.indexOf(':') + 1).trim()).orElse(cpu);
    } catch (IOException | RuntimeException e) {
      // not Linux: leave it unknown
    }
    long memory = ((com.sun.management.OperatingSystemMXBean)
        java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getTotalMemorySize();
    return String.format("%s, %d cores, %.0f GiB, %s %s, Java %s%s", cpu,
        Runtime.getRuntime().availableProcessors(), memory / 1073741824.0,
        System.getProperty("os.name"), System.getProperty("os.version"),
        System.getProperty("java.version"), congestionControl());
  }

  /**
   * The TCP congestion control new sockets get, where Linux says. It changes what loopback costs:
   * loopback has no queueing discipline to pace for BBR, so TCP paces each flow with its own
   * timers, and on the 2-core build VM that took 3 to 4 times the CPU per byte of CUBIC's runs
   * (docs/benchmarks.md, "Fetch throughput and CPU per GB").
   */
  private static String congestionControl() {
    try {
      return ", TCP " + Files.readString(Path.of("/proc/sys/net/ipv4/tcp_congestion_control")).trim();
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }
}
