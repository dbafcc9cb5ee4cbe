package io.gpudirect.client;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.TestCertificates;
import io.gpudirect.testing.TestFiles;
import io.gpudirect.tls.TlsContexts;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * What TLS costs on the TCP path, over loopback: one file read whole into a direct buffer from
 * two servers on the same root, one plaintext and one TLS, alternating run by run so that both
 * see the same machine state. Prints the median and best GB/s of each and their ratio, per
 * stream count. Not a test: {@code java -cp <the benchmarks module's test classpath>
 * io.gpudirect.client.TlsCostBenchmark [MiB] [rounds] [streams,...]}.
 */
public final class TlsCostBenchmark {
  private TlsCostBenchmark() {}

  public static void main(String[] args) throws Exception {
    int mib = args.length > 0 ? Integer.parseInt(args[0]) : 512;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    String[] streamCounts = (args.length > 2 ? args[2] : "1,4").split(",");
    Path dir = Files.createTempDirectory("gpudirect-tls-bench");
    try {
      int size = mib << 20;
      TestFiles.write(dir.resolve("root/blob.bin"), size, 1);
      TestCertificates cert = TestCertificates.create(dir.resolve("keys"), "bench");
      try (BlockServer plain = BlockServer.builder().root(dir.resolve("root")).port(0).build().start();
          BlockServer tls = BlockServer.builder().root(dir.resolve("root")).port(0)
              .tls(TlsContexts.server(cert.certificate(), cert.privateKey())).build().start();
          BufferAllocator allocator = BufferAllocator.root().newChildAllocator("bench", 2L * size);
          HostBuffer dst = allocator.allocate(size)) {
        System.out.printf("file %d MiB, %d rounds, CRC32C on, %d cores, %s%n", mib, rounds,
            Runtime.getRuntime().availableProcessors(), System.getProperty("java.vm.version"));
        for (String s : streamCounts) {
          int streams = Integer.parseInt(s.trim());
          ClientConfig base = ClientConfig.builder().streams(streams).build();
          ClientConfig secure = base.toBuilder().tls(true).tlsTrustStore(cert.certificate()).build();
          List<Double> plainRates = new ArrayList<>();
          List<Double> tlsRates = new ArrayList<>();
          try (BlockClient p = BlockClient.connect(new InetSocketAddress("127.0.0.1", plain.port()), base);
              BlockClient t = BlockClient.connect(new InetSocketAddress("127.0.0.1", tls.port()), secure)) {
            // One warm-up each, then alternate.
            read(p, dst.nioBuffer());
            read(t, dst.nioBuffer());
            for (int r = 0; r < rounds; r++) {
              plainRates.add(read(p, dst.nioBuffer()));
              tlsRates.add(read(t, dst.nioBuffer()));
            }
          }
          double pm = median(plainRates);
          double tm = median(tlsRates);
          System.out.printf("streams %d: plaintext median %.2f GB/s (best %.2f), TLS median %.2f GB/s"
                  + " (best %.2f), TLS/plaintext %.2f%n", streams, pm, Collections.max(plainRates), tm,
              Collections.max(tlsRates), tm / pm);
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

  private static double median(List<Double> xs) {
    List<Double> s = new ArrayList<>(xs);
    Collections.sort(s);
    return s.get(s.size() / 2);
  }
}
