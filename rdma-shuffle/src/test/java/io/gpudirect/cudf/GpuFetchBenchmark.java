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
import java.util.Random;
import java.util.concurrent.CompletableFuture;

/**
 * Bytes into device memory over loopback TCP, beside its two limits measured in the same run:
 * the raw loopback socket (sendfile to a plain reader, same stream count) and the pinned
 * host-to-device copy. Run on the GPU machine:
 * {@code run.sh java io.gpudirect.cudf.GpuFetchBenchmark [GiB] [streams,...]}.
 */
public final class GpuFetchBenchmark {
  private static final int CHUNK = 4 << 20;

  public static void main(String[] args) throws Exception {
    long bytes = (long) (args.length > 0 ? Double.parseDouble(args[0]) : 4) * (1L << 30);
    String[] streamCounts = (args.length > 1 ? args[1] : "1,2,4,8,16").split(",");
    System.out.println("environment: " + GpuEnvironment.get().reason() + ", cores " + Runtime.getRuntime().availableProcessors());
    Path dir = Files.createTempDirectory("gpudirect-bench");
    Path file = dir.resolve("data.bin");
    write(file, bytes);
    System.out.printf("file: %.2f GiB (page-cached)%n", bytes / (double) (1L << 30));

    try (BufferAllocator allocator = BufferAllocator.newRoot("bench", 4L << 30);
         PinnedChunkPool pool = PinnedChunkPool.forThisJvm(allocator, 64, CHUNK, Duration.ofSeconds(60));
         CopyEngine engine = new CopyEngine();
         DeviceMemoryBuffer device = DeviceMemoryBuffer.allocate(bytes);
         BlockServer server = BlockServer.builder().root(dir).port(0).build().start()) {
      double h2d = best(3, () -> pinnedCopy(pool, engine, device, bytes));
      System.out.printf("pinned H2D copy engine: %.2f GB/s%n", h2d);
      System.out.println("streams | raw socket GB/s | to device, CRC32C on | to device, CRC32C off | ratio (on, off) to min(socket, H2D)");
      for (String s : streamCounts) {
        int streams = Integer.parseInt(s.trim());
        double raw = best(3, () -> rawSocket(file, bytes, streams));
        double on = toDevice(server, pool, engine, device, bytes, streams, true);
        double off = toDevice(server, pool, engine, device, bytes, streams, false);
        double limit = Math.min(raw, h2d);
        System.out.printf("%7d | %15.2f | %19.2f | %20.2f | %.2f, %.2f%n", streams, raw, on, off, on / limit, off / limit);
      }
    } finally {
      Files.deleteIfExists(file);
      Files.deleteIfExists(dir);
    }
  }

  /** Best of three whole-file reads into device memory through RemoteFileDataSource. */
  private static double toDevice(BlockServer server, PinnedChunkPool pool, CopyEngine engine,
      DeviceMemoryBuffer device, long bytes, int streams, boolean checksums) throws Exception {
    // Four chunks in flight per stream keep every connection busy while earlier chunks copy.
    int window = Math.min(streams * 4, 48) * CHUNK;
    ClientConfig config = ClientConfig.builder().streams(streams).chunkSize(CHUNK).maxBytesInFlight(window)
        .checksums(checksums).build();
    try (BlockClient client = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()), config)) {
      RemoteFileDataSource source = new RemoteFileDataSource(client, "data.bin", bytes, pool, engine);
      return best(3, () -> {
        long start = System.nanoTime();
        source.deviceRead(0, device, ai.rapids.cudf.Cuda.DEFAULT_STREAM);
        return bytes / ((System.nanoTime() - start) / 1e9) / 1e9;
      });
    }
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
    for (long off = 0; off < bytes; off += CHUNK) {
      int len = (int) Math.min(CHUNK, bytes - off);
      PinnedChunk c = pool.acquire();
      copies.add(engine.copyToDevice(c, len, device.getAddress() + off));
    }
    copies.forEach(CompletableFuture::join);
    engine.synchronize();
    return bytes / ((System.nanoTime() - start) / 1e9) / 1e9;
  }

  /** Plain sockets: each stream sends its share of the file with sendfile; the reader discards into a direct buffer. */
  private static double rawSocket(Path file, long bytes, int streams) throws Exception {
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
          ByteBuffer buf = ByteBuffer.allocateDirect(CHUNK);
          try (SocketChannel s = SocketChannel.open(new InetSocketAddress("127.0.0.1", port))) {
            while (s.read(buf.clear()) >= 0) {
              // discard
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
    ByteBuffer block = ByteBuffer.allocateDirect(CHUNK);
    byte[] random = new byte[CHUNK];
    new Random(1).nextBytes(random);
    block.put(random).flip();
    try (FileChannel f = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      for (long off = 0; off < bytes; off += CHUNK) {
        ByteBuffer b = block.duplicate();
        b.limit((int) Math.min(CHUNK, bytes - off));
        while (b.hasRemaining()) {
          f.write(b);
        }
      }
    }
  }
}
