package io.gpudirect.bench;

import io.gpudirect.client.BlockClient;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.BlockServerBuilder;
import io.gpudirect.testing.Medians;
import io.gpudirect.testing.TestFiles;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.UnaryOperator;

/**
 * The loop of the benchmarks that pit one client against another over loopback
 * ({@code TlsCostBenchmark}, {@code UcxFetchBenchmark}): one page-cached file read whole into one
 * direct buffer by a baseline client and a contender, one warm-up read each, then alternating
 * round by round so that both see the same machine state. Prints, per stream count, the median
 * and best GB/s of each and their ratio. Arguments: {@code [MiB] [rounds] [streams,...]}.
 */
public final class AlternatingFetches {
  private static final String FILE = "blob.bin";

  private AlternatingFetches() {}

  /** One side: how a line names it (once connected: it may say which transport it runs), and how it connects. */
  public record Side(Function<BlockClient, String> name, IntFunction<BlockClient> connect) {
    public static Side named(String name, IntFunction<BlockClient> connect) {
      return new Side(client -> name, connect);
    }
  }

  /** What the header line adds after the machine's description, the two sides, and how the lines name their ratio. */
  public record Contest(String description, Side baseline, Side contender, String ratio) {}

  /** Starts a benchmark's servers; {@code scratch} is a directory of its own, deleted at the end. */
  @FunctionalInterface
  public interface Arena {
    Contest start(Servers servers, Path scratch) throws Exception;
  }

  /** The servers of one run, all over the file's root on free ports, all stopped when the run ends. */
  public static final class Servers implements AutoCloseable {
    private final Path root;
    private final Deque<BlockServer> started = new ArrayDeque<>();

    private Servers(Path root) {
      this.root = root;
    }

    public BlockServer start(UnaryOperator<BlockServerBuilder> configure) {
      BlockServer server = configure.apply(BlockServer.builder().root(root).port(0)).build().start();
      started.push(server);
      return server;
    }

    @Override
    public void close() {
      while (!started.isEmpty()) {
        started.pop().close();
      }
    }
  }

  /**
   * Runs a benchmark with its command line {@code args}; {@code defaultMib} is the file's size
   * when none is given, {@code name} the prefix of its temporary directory.
   */
  public static void run(String[] args, int defaultMib, String name, Arena arena) throws Exception {
    int mib = args.length > 0 ? Integer.parseInt(args[0]) : defaultMib;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    String[] streamCounts = (args.length > 2 ? args[2] : "1,4").split(",");
    Path dir = Files.createTempDirectory(name);
    try {
      int size = mib << 20;
      TestFiles.write(dir.resolve("root").resolve(FILE), size, 1);
      try (Servers servers = new Servers(dir.resolve("root"));
          BufferAllocator allocator = BufferAllocator.root().newChildAllocator("bench", 2L * size);
          HostBuffer dst = allocator.allocate(size)) {
        Contest contest = arena.start(servers, dir);
        System.out.printf("file %d MiB, %d rounds, CRC32C on, %d cores, %s%s%n", mib, rounds,
            Runtime.getRuntime().availableProcessors(), System.getProperty("java.vm.version"), contest.description());
        for (String s : streamCounts) {
          int streams = Integer.parseInt(s.trim());
          List<Double> baselineRates = new ArrayList<>();
          List<Double> contenderRates = new ArrayList<>();
          try (BlockClient baseline = contest.baseline().connect().apply(streams);
              BlockClient contender = contest.contender().connect().apply(streams)) {
            read(baseline, dst.nioBuffer());
            read(contender, dst.nioBuffer());
            for (int r = 0; r < rounds; r++) {
              baselineRates.add(read(baseline, dst.nioBuffer()));
              contenderRates.add(read(contender, dst.nioBuffer()));
            }
            double bm = Medians.of(baselineRates);
            double cm = Medians.of(contenderRates);
            System.out.printf("streams %d: %s median %.2f GB/s (best %.2f), %s median %.2f GB/s (best %.2f), %s %.2f%n",
                streams, contest.baseline().name().apply(baseline), bm, Collections.max(baselineRates),
                contest.contender().name().apply(contender), cm, Collections.max(contenderRates), contest.ratio(),
                cm / bm);
          }
        }
      }
    } finally {
      try (var files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      }
    }
  }

  /** GB/s of one whole read of the file. */
  private static double read(BlockClient client, ByteBuffer dst) {
    long start = System.nanoTime();
    client.read(FILE, 0, dst);
    if (dst.hasRemaining()) {
      throw new IllegalStateException("short read");
    }
    return dst.capacity() / ((System.nanoTime() - start) / 1e9) / 1e9;
  }
}
