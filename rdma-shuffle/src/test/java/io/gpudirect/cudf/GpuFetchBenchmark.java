package io.gpudirect.cudf;

import ai.rapids.cudf.DeviceMemoryBuffer;
import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.gpu.CopyEngine;
import io.gpudirect.gpu.GpuEnvironment;
import io.gpudirect.gpu.PinnedChunk;
import io.gpudirect.gpu.PinnedChunkPool;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.server.BlockServer;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

/**
 * Bytes into device memory over loopback TCP, beside its two limits measured in the same run:
 * the raw loopback socket (sendfile to a plain reader, same stream count) and the pinned
 * host-to-device copy. Run on the GPU machine:
 * {@code run.sh java io.gpudirect.cudf.GpuFetchBenchmark [GiB] [streams,...]}.
 */
public final class GpuFetchBenchmark {
  /** The chunk the file is written with and the raw baseline reads into by default. */
  private static final int BLOCK = 4 << 20;

  public static void main(String[] args) throws Exception {
    long bytes = (long) (args.length > 0 ? Double.parseDouble(args[0]) : 4) * (1L << 30);
    String[] streamCounts = (args.length > 1 ? args[1] : "1,2,4,8,16").split(",");
    String[] chunkSizes = (args.length > 2 ? args[2] : "4").split(",");
    System.out.println("environment: " + GpuEnvironment.get().reason() + ", cores " + Runtime.getRuntime().availableProcessors());
    Path dir = Files.createTempDirectory("gpudirect-bench");
    Path file = dir.resolve("data.bin");
    write(file, bytes);
    System.out.printf("file: %.2f GiB (page-cached)%n", bytes / (double) (1L << 30));

    // A second server without block checksums: what a file read for the first time costs.
    try (BlockServer server = BlockServer.builder().root(dir).port(0).build().start();
         BlockServer uncached = BlockServer.builder().root(dir).port(0).checksumCacheBlocks(0).build().start();
         DeviceMemoryBuffer device = DeviceMemoryBuffer.allocate(bytes)) {
      for (String c : chunkSizes) {
        int chunk = Integer.parseInt(c.trim()) << 20;
        try (BufferAllocator allocator = BufferAllocator.newRoot("bench", 4L << 30);
             PinnedChunkPool pool = PinnedChunkPool.forThisJvm(allocator, 64, chunk,
                 Duration.ofSeconds(60));
             CopyEngine engine = new CopyEngine();
             CopyEngine cpuChecks = new CopyEngine(false)) {
          double h2d = best(3, () -> pinnedCopy(pool, engine, device, bytes));
          System.out.printf("%nchunk %d MiB, %d pinned chunks: pinned H2D copy engine %.2f GB/s%n", chunk >> 20,
              pool.heldBytes() / chunk, h2d);
          System.out.println("streams | raw socket GB/s | raw, kept GB/s | to device, CRC32C on | CRC32C on, first read"
              + " | CRC32C by the CPU | CRC32C off | ratio (on, first, CPU, off) to min(raw, H2D)"
              + " | ratio (on, first, CPU, off) to min(raw kept, H2D)");
          for (String s : streamCounts) {
            int streams = Integer.parseInt(s.trim());
            double raw = best(3, () -> rawSocket(file, bytes, streams, BLOCK, 1));
            // The bytes a reader keeps until the GPU has copied them cannot all sit in one
            // buffer that stays in cache: the same read, rotating over the window's chunks.
            double kept = best(3, () -> rawSocket(file, bytes, streams, chunk, chunksPerStream(streams)));
            double on = toDevice(server, pool, engine, device, bytes, streams, chunk, true, "on");
            double first = toDevice(uncached, pool, engine, device, bytes, streams, chunk, true, "on, first read");
            double cpu = toDevice(server, pool, cpuChecks, device, bytes, streams, chunk, true, "by the CPU");
            double off = toDevice(server, pool, engine, device, bytes, streams, chunk, false, "off");
            double limit = Math.min(raw, h2d);
            double keptLimit = Math.min(kept, h2d);
            System.out.printf("%7d | %15.2f | %14.2f | %19.2f | %21.2f | %17.2f | %10.2f | %.2f, %.2f, %.2f, %.2f"
                    + " | %.2f, %.2f, %.2f, %.2f%n",
                streams, raw, kept, on, first, cpu, off, on / limit, first / limit, cpu / limit, off / limit,
                on / keptLimit, first / keptLimit, cpu / keptLimit, off / keptLimit);
          }
        }
      }
    } finally {
      Files.deleteIfExists(file);
      Files.deleteIfExists(dir);
    }
  }

  /** Chunks in flight per stream: enough to keep every connection busy while earlier chunks copy. */
  private static int chunksPerStream(int streams) {
    return Integer.getInteger("gpudirect.bench.chunksPerStream", Math.max(1, Math.min(streams * 4, 48) / streams));
  }

  /** Best of three whole-file reads into device memory through RemoteFileDataSource. */
  private static double toDevice(BlockServer server, PinnedChunkPool pool, CopyEngine engine,
      DeviceMemoryBuffer device, long bytes, int streams, int chunk, boolean checksums, String label) throws Exception {
    int window = chunksPerStream(streams) * streams * chunk;
    ClientConfig config = ClientConfig.builder().streams(streams).chunkSize(chunk).maxBytesInFlight(window)
        .checksums(checksums).build();
    try (BlockClient client = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()), config)) {
      RemoteFileDataSource source = new RemoteFileDataSource(client, "data.bin", bytes, pool, engine);
      Map<String, Long> before = cpuByRole();
      double gbs = best(3, () -> {
        long start = System.nanoTime();
        source.deviceRead(0, device, ai.rapids.cudf.Cuda.DEFAULT_STREAM);
        return bytes / ((System.nanoTime() - start) / 1e9) / 1e9;
      });
      if (PROFILE) {
        Map<String, Long> after = cpuByRole();
        StringBuilder line = new StringBuilder(String.format("    CPU s/GB by thread role (%d streams, %d MiB, CRC32C %s):",
            streams, chunk >> 20, label));
        after.forEach((role, ns) -> {
          double sPerGb = (ns - before.getOrDefault(role, 0L)) / 1e9 / (3 * bytes / 1e9);
          if (sPerGb >= 0.005) {
            line.append(String.format(" %s %.3f;", role, sPerGb));
          }
        });
        System.out.println(line);
      }
      return gbs;
    }
  }

  private static final boolean PROFILE = Boolean.getBoolean("gpudirect.bench.profile");

  /** CPU nanoseconds of live threads, summed by name without its numbers (the thread's role). */
  private static Map<String, Long> cpuByRole() {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    Map<String, Long> byRole = new TreeMap<>();
    for (ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds())) {
      long ns = t == null ? -1 : mx.getThreadCpuTime(t.getThreadId());
      if (ns > 0) {
        String role = t.getThreadName().replaceAll("[-:.0-9]+(?=-|$)", "").replaceAll("-+$", "");
        byRole.merge(role, ns, Long::sum);
      }
    }
    return byRole;
  }

  private interface Run {
    double gbPerSecond() throws Exception;
  }

  private static double best(int times, Run run) throws Exception {
    double best = 0;
    for (int i = 0; i < times; i++) {
      best = Math.max(best, run.gbPerSecond());
    }
    return best;
  }

  /** The copy engine alone: the same pinned chunks copied until {@code bytes} have crossed. */
  private static double pinnedCopy(PinnedChunkPool pool, CopyEngine engine, DeviceMemoryBuffer device, long bytes) {
    long start = System.nanoTime();
    List<CompletableFuture<Void>> copies = new ArrayList<>();
    for (long off = 0; off < bytes; off += pool.chunkSize()) {
      int len = (int) Math.min(pool.chunkSize(), bytes - off);
      PinnedChunk c = pool.acquire();
      copies.add(engine.copyToDevice(c, len, device.getAddress() + off));
    }
    copies.forEach(CompletableFuture::join);
    engine.synchronize();
    return bytes / ((System.nanoTime() - start) / 1e9) / 1e9;
  }

  /**
   * Plain sockets: each stream sends its share of the file with sendfile; the reader discards
   * into {@code buffers} direct buffers of {@code size} bytes, filling one after the other.
   */
  private static double rawSocket(Path file, long bytes, int streams, int size, int buffers) throws Exception {
    try (ServerSocketChannel listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
      int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
      long share = bytes / streams;
      List<Thread> threads = new ArrayList<>();
      for (int i = 0; i < streams; i++) {
        long from = i * share;
        long len = i == streams - 1 ? bytes - from : share;
        threads.add(new Thread(() -> {
          try (SocketChannel s = listener.accept(); FileChannel f = FileChannel.open(file)) {
            long sent = 0;
            while (sent < len) {
              sent += f.transferTo(from + sent, len - sent, s);
            }
          } catch (IOException e) {
            throw new RuntimeException(e);
          }
        }));
      }
      threads.forEach(Thread::start);
      long start = System.nanoTime();
      List<Thread> readers = new ArrayList<>();
      for (int i = 0; i < streams; i++) {
        readers.add(new Thread(() -> {
          ByteBuffer[] bufs = new ByteBuffer[buffers];
          for (int b = 0; b < buffers; b++) {
            bufs[b] = ByteBuffer.allocateDirect(size);
          }
          try (SocketChannel s = SocketChannel.open(new InetSocketAddress("127.0.0.1", port))) {
            for (int b = 0; ; b = (b + 1) % buffers) {
              ByteBuffer buf = bufs[b].clear();
              int n = 0;
              while (buf.hasRemaining() && (n = s.read(buf)) >= 0) {
                // fill this buffer before the next, as a reader keeping the bytes would
              }
              if (n < 0) {
                break;
              }
            }
          } catch (IOException e) {
            throw new RuntimeException(e);
          }
        }));
      }
      readers.forEach(Thread::start);
      for (Thread t : readers) {
        t.join();
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      for (Thread t : threads) {
        t.join();
      }
      return bytes / seconds / 1e9;
    }
  }

  private static void write(Path file, long bytes) throws IOException {
    ByteBuffer block = ByteBuffer.allocateDirect(BLOCK);
    byte[] random = new byte[BLOCK];
    new Random(1).nextBytes(random);
    block.put(random).flip();
    try (FileChannel f = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      for (long off = 0; off < bytes; off += BLOCK) {
        ByteBuffer b = block.duplicate();
        b.limit((int) Math.min(BLOCK, bytes - off));
        while (b.hasRemaining()) {
          f.write(b);
        }
      }
    }
  }
}
