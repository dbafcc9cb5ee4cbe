package io.gpudirect.spark.tpch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * What the host's kernel did for this process and to its memory while a query ran, from Linux's
 * {@code /proc}: this JVM's user and system CPU, and the machine's direct reclaim (threads that
 * stalled to free page cache before they could allocate), dirty page cache and available memory.
 * TPC-H q9 at SF 30 took 2.5–3.3 s or 5.8–7.7 s on either side with three times the CPU in the
 * long draws and the same plan as far as the final plans showed; a long draw that is the kernel's
 * (reclaiming or writing back the earlier queries' shuffle files) shows here as system CPU and
 * stalls, and one that is Spark's does not.
 */
record HostPressure(double userSeconds, double systemSeconds, long reclaimStalls, long directScans,
    long dirtyKiB, long availableKiB) {
  /** Linux's clock ticks per second for /proc's CPU times; 100 on every kernel Java runs on here. */
  private static final double TICKS = 100.0;

  /** Now, or null where there is no Linux /proc to read. */
  static HostPressure now() {
    try {
      String stat = Files.readString(Path.of("/proc/self/stat"));
      // The fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      Map<String, Long> vm = counters(Path.of("/proc/vmstat"), " ");
      Map<String, Long> mem = counters(Path.of("/proc/meminfo"), ":");
      long stalls = vm.entrySet().stream().filter(e -> e.getKey().startsWith("allocstall"))
          .mapToLong(Map.Entry::getValue).sum();
      return new HostPressure(Long.parseLong(f[11]) / TICKS, Long.parseLong(f[12]) / TICKS, stalls,
          vm.getOrDefault("pgscan_direct", 0L), mem.getOrDefault("Dirty", 0L), mem.getOrDefault("MemAvailable", 0L));
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  private static Map<String, Long> counters(Path file, String separator) throws IOException {
    Map<String, Long> values = new HashMap<>();
    for (String line : Files.readAllLines(file)) {
      int at = line.indexOf(separator);
      if (at > 0) {
        String value = line.substring(at + 1).trim().split(" ")[0];
        if (value.chars().allMatch(Character::isDigit) && !value.isEmpty()) {
          values.put(line.substring(0, at).trim(), Long.parseLong(value));
        }
      }
    }
    return values;
  }

  /** One line: from {@code start} to {@code end}, or why there is none. */
  static String between(HostPressure start, HostPressure end) {
    if (start == null || end == null) {
      return "host: no Linux /proc here";
    }
    return String.format(Locale.ROOT, "host: this JVM %.2f s user, %.2f s system; direct reclaim %d stalls,"
        + " %d pages scanned; dirty page cache %d to %d MiB; memory available %.1f to %.1f GiB",
        end.userSeconds - start.userSeconds, end.systemSeconds - start.systemSeconds,
        end.reclaimStalls - start.reclaimStalls, end.directScans - start.directScans,
        start.dirtyKiB >> 10, end.dirtyKiB >> 10, start.availableKiB / 1048576.0, end.availableKiB / 1048576.0);
  }
}
