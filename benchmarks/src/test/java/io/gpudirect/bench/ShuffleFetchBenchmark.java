package io.gpudirect.bench;

import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.ClientContext;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.protocol.ChecksumAlgorithm;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.server.BlockServer;
import io.gpudirect.shuffle.BlockToFetch;
import io.gpudirect.shuffle.FetchLimits;
import io.gpudirect.shuffle.FetchedBlock;
import io.gpudirect.shuffle.ShuffleBlockFetcher;
import io.gpudirect.shuffle.ShuffleClients;
import io.gpudirect.testing.SparkShuffleLayout;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * One reducer's fetch of many shuffle blocks from an executor's server on loopback, as the
 * shuffle's reducers fetch them (Spark's limits, each block read through its stream and closed,
 * checked against the ADLER32 checksums Spark's writer keeps by default),
 * against the raw socket (sendfile into a reader that discards, no request, no checksum) over
 * the same streams, alternated round by round. Prints the median GB/s of each and their ratio.
 * Not a test: {@code java -cp <the benchmarks module's test classpath>
 * io.gpudirect.bench.ShuffleFetchBenchmark [blocks] [KiB per block] [streams,...] [rounds] [checksums]}
 * (checksums: true, the default, or false for fetches that check nothing).
 */
public final class ShuffleFetchBenchmark {
  private ShuffleFetchBenchmark() {}

  public static void main(String[] args) throws Exception {
    int blocks = args.length > 0 ? Integer.parseInt(args[0]) : 400;
    int blockBytes = (args.length > 1 ? Integer.parseInt(args[1]) : 1024) << 10;
    int[] streamCounts = Arrays.stream((args.length > 2 ? args[2] : "1,4").split(",")).mapToInt(Integer::parseInt)
        .toArray();
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 5;
    boolean checksums = args.length <= 4 || Boolean.parseBoolean(args[4]);
    Path dir = Files.createTempDirectory("gpudirect-shuffle-fetch-bench");
    try {
      SparkShuffleLayout layout = new SparkShuffleLayout(List.of(dir.resolve("blockmgr-bench")), 64);
      byte[] partition = new byte[blockBytes];
      new Random(1).nextBytes(partition);
      List<BlockToFetch> toFetch = new ArrayList<>();
      for (int m = 0; m < blocks; m++) {
        layout.writeWithChecksums(1, m, "ADLER32", java.util.zip.Adler32::new, partition, partition);
        toFetch.add(new BlockToFetch(ShuffleBlockId.of(1, m, 1), blockBytes));
      }
      Path rawFile = layout.data(1, 0);
      System.out.printf("%d blocks of %d KiB, Spark's fetch limits, checksums %s; medians of %d alternated rounds%n",
          blocks, blockBytes >> 10, checksums ? "on" : "off", rounds);
      System.out.println("streams | shuffle fetch GB/s | raw socket GB/s | ratio");
      try (BlockServer server = BlockServer.builder().shuffleDirectories(layout.localDirs(), 64)
          .shuffleChecksums(ChecksumAlgorithm.ADLER32).port(0).build()
          .start()) {
        InetSocketAddress address = new InetSocketAddress("127.0.0.1", server.port());
        for (int streams : streamCounts) {
          double[] ours = new double[rounds];
          double[] raw = new double[rounds];
          try (ShuffleClients clients = new ShuffleClients(ClientConfig.builder().streams(streams).checksums(checksums).build(),
              new ClientContext())) {
            BufferAllocator memory = BufferAllocator.root().newChildAllocator("shuffle-fetch-bench", Long.MAX_VALUE);
            fetch(address, toFetch.subList(0, Math.min(40, blocks)), clients, memory);
            for (int r = 0; r < rounds; r++) {
              long start = System.nanoTime();
              long bytes = fetch(address, toFetch, clients, memory);
              ours[r] = bytes / ((System.nanoTime() - start) / 1e9) / 1e9;
              Measurement m = RawSocketBaseline.stream(rawFile, streams, 1.0);
              raw[r] = m.bytes() / m.seconds() / 1e9;
            }
            memory.close();
          }
          double o = median(ours);
          double b = median(raw);
          System.out.printf("%7d | %18.2f | %15.2f | %.2f%n", streams, o, b, o / b);
        }
      }
    } finally {
      try (var files = Files.walk(dir)) {
        files.sorted((a, b) -> b.compareTo(a)).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** Every block fetched and read through its stream, as a reduce task reads them; the bytes read. */
  private static long fetch(InetSocketAddress server, List<BlockToFetch> blocks, ShuffleClients clients,
      BufferAllocator memory) throws Exception {
    long bytes = 0;
    byte[] sink = new byte[64 << 10];
    try (ShuffleBlockFetcher fetcher = ShuffleBlockFetcher.start(Map.of(server, blocks), FetchLimits.SPARK_DEFAULTS,
        clients, memory)) {
      while (fetcher.hasNext()) {
        try (FetchedBlock b = fetcher.next(); InputStream in = b.inputStream()) {
          for (int n; (n = in.read(sink)) > 0; ) {
            bytes += n;
          }
        }
      }
    }
    return bytes;
  }

  private static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }
}
