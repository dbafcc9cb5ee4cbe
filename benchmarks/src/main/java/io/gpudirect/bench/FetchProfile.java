package io.gpudirect.bench;

import io.gpudirect.client.BlockClient;
import io.gpudirect.server.BlockServer;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Only our fetch, for profilers and {@code strace -c -f}: an embedded server and a client
 * reading one file for a while, nothing else in the process. Prints bytes and rate.
 *
 * <p>Arguments: streams chunkBytes checksums(true|false) seconds fileSize [latency|pingpong|raw].
 * With "latency" as the sixth argument it runs 4 KiB reads at random offsets instead (after
 * 2 s of them untimed, for the JIT); with "pingpong", the raw socket ping-pong that is their
 * reference; with "raw", the raw socket baseline reading into buffers of chunkBytes; with
 * "rawkept", the raw socket keeping its bytes in as much memory as our fetch holds.
 * {@code -Dgpudirect.bench.warmup=SECONDS} runs the same first, untimed (default 0), for at
 * least that long and, for our fetch, until the JIT has settled ({@link JitSettling}, at most
 * 60 s): a run after it shows what a process the JIT has finished with pays per byte, as a
 * long-lived executor or server does; the JIT's compile time during the timed run is printed.
 */
public final class FetchProfile {
  private static final double WARMUP = Double.parseDouble(System.getProperty("gpudirect.bench.warmup", "0"));

  private FetchProfile() {}

  /** Milliseconds the JIT has spent compiling in this process so far. */
  private static long compileMillis() {
    return java.lang.management.ManagementFactory.getCompilationMXBean().getTotalCompilationTime();
  }

  /** Each role's CPU per GB moved, and how much of it was in user mode (the rest the kernel's). */
  private static void printCpuByRole(ThreadCpu roles, Measurement m) {
    double gb = m.bytes() / 1e9;
    Map<String, Double> total = roles.secondsByRole();
    Map<String, Double> user = roles.userSecondsByRole();
    total.forEach((role, cpu) -> {
      if (cpu / gb >= 0.0005) {
        System.out.printf("  cpu %-40s %6.3f s/GB, user %6.3f%n", role, cpu / gb, user.getOrDefault(role, 0.0) / gb);
      }
    });
  }

  public static void main(String[] args) throws Exception {
    int streams = Integer.parseInt(args[0]);
    int chunk = (int) Sizes.parse(args[1]);
    boolean crc = Boolean.parseBoolean(args[2]);
    double seconds = Double.parseDouble(args[3]);
    long size = Sizes.parse(args[4]);
    boolean latency = args.length > 5 && args[5].equals("latency");
    boolean raw = args.length > 5 && args[5].startsWith("raw");
    boolean kept = args.length > 5 && args[5].equals("rawkept");
    boolean pingPong = args.length > 5 && args[5].equals("pingpong");
    Path dir = Files.createTempDirectory("gpudirect-profile");
    Path file = dir.resolve("fetch.bin");
    try {
      BenchCommand.writeRandom(file, size);
      try (BlockServer server = BlockServer.builder().root(dir).bindAddress("127.0.0.1").port(0)
          .checksumCacheBlocks(Long.getLong("gpudirect.bench.checksumCacheBlocks", 4L << 20)).build()) {
        server.start();
        InetSocketAddress address = new InetSocketAddress("127.0.0.1", server.port());
        if (pingPong) {
          RawSocketBaseline.pingPong(file, size, 4096, 2, 0);
          Latencies l = RawSocketBaseline.pingPong(file, size, 4096, seconds, 1);
          System.out.printf("round trips=%d p50=%.1fus p99=%.1fus%n", l.count(), l.percentileMicros(50), l.percentileMicros(99));
        } else if (raw) {
          if (WARMUP > 0) {
            RawSocketBaseline.stream(file, streams, WARMUP, chunk);
          }
          long compiling = compileMillis();
          ThreadCpu roles = new ThreadCpu();
          Measurement m = kept ? RawSocketBaseline.streamKeeping(file, streams, seconds, OurFetch.heldBytes(size))
              : RawSocketBaseline.stream(file, streams, seconds, chunk);
          System.out.printf("raw bytes=%d seconds=%.2f gbit=%.2f cpuPerGB=%.3f jitMillis=%d%n", m.bytes(), m.seconds(), m.gbitPerSecond(), m.cpuSecondsPerGb(), compileMillis() - compiling);
          printCpuByRole(roles, m);
        } else if (latency) {
          OurLatency.run(address, "fetch.bin", size, 4096, crc, 2, 0);
          Latencies l = OurLatency.run(address, "fetch.bin", size, 4096, crc, seconds, 1);
          System.out.printf("reads=%d p50=%.1fus p99=%.1fus%n", l.count(), l.percentileMicros(50), l.percentileMicros(99));
        } else {
          Measurement m;
          ThreadCpu roles;
          long compiling;
          try (BlockClient client = BlockClient.connect(address, OurFetch.config(streams, chunk, crc))) {
            if (WARMUP > 0) {
              // Until the JIT has settled, as the bench waits: our per-chunk methods reach C2 only
              // 15-20 s in on the 2-core VM, and a fixed 10 s left it compiling 2 s of a 12 s run.
              JitSettling.Warmed warmed = new JitSettling().warm(WARMUP, Math.max(WARMUP, 60),
                  pass -> OurFetch.run(client, "fetch.bin", size, 1));
              System.out.println("warm-up: " + warmed.describe());
            }
            compiling = compileMillis();
            roles = new ThreadCpu();
            m = OurFetch.run(client, "fetch.bin", size, seconds);
          }
          System.out.printf("bytes=%d seconds=%.2f gbit=%.2f cpuPerGB=%.3f jitMillis=%d%n", m.bytes(), m.seconds(), m.gbitPerSecond(), m.cpuSecondsPerGb(), compileMillis() - compiling);
          printCpuByRole(roles, m);
          double chunks = Math.ceil((double) m.bytes() / chunk);
          roles.allocatedByRole().forEach((role, bytes) -> System.out.printf("  heap %-39s %8.0f bytes per chunk%n", role, bytes / chunks));
        }
      }
    } finally {
      Files.deleteIfExists(file);
      Files.deleteIfExists(dir);
    }
  }
}
