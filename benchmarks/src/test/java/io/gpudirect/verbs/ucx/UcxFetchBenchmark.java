package io.gpudirect.verbs.ucx;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.TransportSelector;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.testing.Medians;
import io.gpudirect.testing.TestFiles;
import io.gpudirect.verbs.provider.RdmaProvider;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * UCX fetch throughput against gpudirect's own TCP path, over loopback, in one run: one server
 * serving both (--rdma on, UCX), one file read whole into a direct buffer by a TCP client and
 * by a transport=rdma client (UCX, over whatever transport it has here), alternating round by
 * round so that both see the same machine state. Prints the median and best GB/s of each and
 * their ratio, per stream count. Not a test: {@code java -cp <the benchmarks module's test classpath>
 * io.gpudirect.verbs.ucx.UcxFetchBenchmark [MiB] [rounds] [streams,...]}.
 */
public final class UcxFetchBenchmark {
  private UcxFetchBenchmark() {}

  public static void main(String[] args) throws Exception {
    int mib = args.length > 0 ? Integer.parseInt(args[0]) : 256;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    String[] streamCounts = (args.length > 2 ? args[2] : "1,4").split(",");
    Path dir = Files.createTempDirectory("gpudirect-ucx-bench");
    try {
      int size = mib << 20;
      TestFiles.write(dir.resolve("root/blob.bin"), size, 1);
      try (BlockServer server = BlockServer.builder().root(dir.resolve("root")).port(0).rdma(RdmaMode.ON)
              .rdmaProvider(RdmaProvider.UCX).build().start();
          BufferAllocator allocator = BufferAllocator.root().newChildAllocator("bench", 2L * size);
          HostBuffer dst = allocator.allocate(size)) {
        System.out.printf("file %d MiB, %d rounds, CRC32C on, %d cores, %s, server %s%n", mib, rounds,
            Runtime.getRuntime().availableProcessors(), System.getProperty("java.vm.version"),
            server.rdmaStatus());
        InetSocketAddress address = new InetSocketAddress("127.0.0.1", server.port());
        for (String s : streamCounts) {
          int streams = Integer.parseInt(s.trim());
          List<Double> tcpRates = new ArrayList<>();
          List<Double> ucxRates = new ArrayList<>();
          try (BlockClient tcp = BlockClient.connect(address, ClientConfig.builder().streams(streams)
                  .transport("tcp").build());
              BlockClient ucx = BlockClient.connect(address, ClientConfig.builder().streams(streams)
                  .transport("rdma").build(), TransportSelector.of(RdmaProvider.UCX))) {
            read(tcp, dst.nioBuffer());
            read(ucx, dst.nioBuffer());
            for (int r = 0; r < rounds; r++) {
              tcpRates.add(read(tcp, dst.nioBuffer()));
              ucxRates.add(read(ucx, dst.nioBuffer()));
            }
            double tm = Medians.of(tcpRates);
            double um = Medians.of(ucxRates);
            System.out.printf("streams %d: tcp median %.2f GB/s (best %.2f), %s median %.2f GB/s"
                    + " (best %.2f), ucx/tcp %.2f%n", streams, tm, Collections.max(tcpRates), ucx.transport(),
                um, Collections.max(ucxRates), um / tm);
          }
        }
      }
    } finally {
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      }
    }
  }

  private static double read(BlockClient client, ByteBuffer dst) {
    long start = System.nanoTime();
    client.read("blob.bin", 0, dst);
    if (dst.hasRemaining()) {
      throw new IllegalStateException("short read");
    }
    return dst.capacity() / ((System.nanoTime() - start) / 1e9) / 1e9;
  }
}
