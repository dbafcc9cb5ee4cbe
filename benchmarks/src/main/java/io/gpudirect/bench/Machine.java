package io.gpudirect.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** One line about the machine a bench ran on: CPU model, cores, memory, OS, JVM. */
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
    return String.format("%s, %d cores, %.0f GiB, %s %s, Java %s", cpu,
        Runtime.getRuntime().availableProcessors(), memory / 1073741824.0,
        System.getProperty("os.name"), System.getProperty("os.version"),
        System.getProperty("java.version"));
  }
}
