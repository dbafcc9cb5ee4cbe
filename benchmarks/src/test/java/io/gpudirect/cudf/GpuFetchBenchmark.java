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
import io.gpudirect.testing.Medians;
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
import java.util.concurrent.Semaphore;

/**
 * Bytes into device memory over loopback TCP, beside its two limits measured in the same run:
 * the raw loopback socket (sendfile to a plain reader, same stream count) and the pinned
 * host-to-device copy. Run on the GPU machine (staged with {@code stage --cudf --module benchmarks}):
 * {@code run.sh java io.gpudirect.cudf.GpuFetchBenchmark [GiB] [streams,...] [chunkMiB,...]}.
 * It sits in {@code RemoteFileDataSource}'s package for the source's bound-at-send mode.
 *
 * <p>Each row also gives the same read with each piece's pinned chunk taken before its request
 * is sent ("bound at send", as before late binding) and the most pinned chunks each column
 * held at once. Properties: {@code gpudirect.bench.rounds} (5), {@code .pinnedChunks} (64),
 * {@code .chunksPerStream}, {@code .profile}, {@code .ucx}; and
 * {@code -Dgpudirect.copyEngine.blockingSync=true} for completion threads that sleep.
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
         // -Dgpudirect.bench.ucx=true: a UCX column too (transport=rdma over whatever UCX has).
         BlockServer ucxServer = UCX ? BlockServer.builder().root(dir).port(0).rdma(io.gpudirect.server.RdmaMode.ON)
             .rdmaProvider(io.gpudirect.verbs.provider.RdmaProvider.UCX).build().start() : null;
         DeviceMemoryBuffer device = DeviceMemoryBuffer.allocate(bytes)) {
      for (String c : chunkSizes) {
        int chunk = Integer.parseInt(c.trim()) << 20;
        try (BufferAllocator allocator = BufferAllocator.newRoot("bench", 4L << 30);
             PinnedChunkPool pool = PinnedChunkPool.forThisJvm(allocator, PINNED_CHUNKS, chunk,
                 Duration.ofSeconds(60));
             CopyEngine engine = new CopyEngine();
             CopyEngine cpuChecks = new CopyEngine(false)) {
          double h2d = best(3, () -> pinnedCopy(pool, engine, device, bytes, false));
          double h2dChecked = best(3, () -> pinnedCopy(pool, engine, device, bytes, true));
          System.out.printf("%nchunk %d MiB, %d pinned chunks: pinned H2D copy engine %.2f GB/s, with the GPU's CRC32C"
              + " of each chunk %.2f GB/s; medians of %d interleaved rounds%n", chunk >> 20, pool.heldBytes() / chunk, h2d,
              h2dChecked, ROUNDS);
          System.out.println("streams | raw socket GB/s | raw, kept GB/s | raw to device GB/s | to device, CRC32C on"
              + " | CRC32C on, first read | CRC32C by the CPU | CRC32C off | ratio (on, first, CPU, off) to min(raw, H2D)"
              + " | ratio (on, first, CPU, off) to min(raw kept, H2D) | ratio (on, off) to raw to device");
          for (String s : streamCounts) {
            int streams = Integer.parseInt(s.trim());
            // Each round measures every column once, so that the machine's drift (large on a
            // shared host) hits them all alike; a ratio is the median of the rounds' ratios.
            double[][] gbs = new double[7][ROUNDS];
            double[] rawDevice = new double[ROUNDS];
            double[] ucxGbs = new double[ROUNDS];
            String ucxTransport;
            try (DeviceFetch on = new DeviceFetch(server, pool, engine, device, bytes, streams, chunk, true, "on");
                 DeviceFetch first = new DeviceFetch(uncached, pool, engine, device, bytes, streams, chunk, true, "on, first read");
                 DeviceFetch cpu = new DeviceFetch(server, pool, cpuChecks, device, bytes, streams, chunk, true, "by the CPU");
                 DeviceFetch off = new DeviceFetch(server, pool, engine, device, bytes, streams, chunk, false, "off");
                 // Each piece's chunk taken before its request is sent: how device reads ran before late binding.
                 DeviceFetch atSend = new DeviceFetch(server, pool, engine, device, bytes, streams, chunk, true,
                     "on, bound at send", "tcp", true);
                 DeviceFetch ucx = UCX ? new DeviceFetch(ucxServer, pool, engine, device, bytes, streams, chunk, true,
                     "on, over UCX", "rdma") : null) {
              for (int r = 0; r < ROUNDS; r++) {
                gbs[0][r] = rawSocket(file, bytes, streams, BLOCK, 1);
                // The bytes a reader keeps until the GPU has copied them cannot all sit in one
                // buffer that stays in cache: the same read, rotating over the window's chunks.
                gbs[1][r] = rawSocket(file, bytes, streams, chunk, chunksPerStream(streams));
                rawDevice[r] = rawToDevice(file, bytes, streams, pool, engine, device);
                gbs[2][r] = on.gbPerSecond();
                gbs[3][r] = first.gbPerSecond();
                gbs[4][r] = cpu.gbPerSecond();
                gbs[5][r] = off.gbPerSecond();
                gbs[6][r] = atSend.gbPerSecond();
                ucxGbs[r] = ucx == null ? 0 : ucx.gbPerSecond();
              }
              ucxTransport = ucx == null ? "" : ucx.client.transport();
              for (DeviceFetch f : List.of(on, first, cpu, off, atSend)) {
                f.printProfile();
              }
              System.out.printf("    most pinned chunks in use (on, first, CPU, off, bound at send): %d, %d, %d, %d, %d of %d%n",
                  on.peakChunks, first.peakChunks, cpu.peakChunks, off.peakChunks, atSend.peakChunks, PINNED_CHUNKS);
            }
            StringBuilder line = new StringBuilder(String.format("%7d | %15.2f | %14.2f | %18.2f | %20.2f | %21.2f | %17.2f | %10.2f |",
                streams, Medians.of(gbs[0]), Medians.of(gbs[1]), Medians.of(rawDevice), Medians.of(gbs[2]), Medians.of(gbs[3]),
                Medians.of(gbs[4]), Medians.of(gbs[5])));
            for (int reference = 0; reference < 2; reference++) {
              for (int col = 2; col < 6; col++) {
                double[] ratios = new double[ROUNDS];
                for (int r = 0; r < ROUNDS; r++) {
                  ratios[r] = gbs[col][r] / Math.min(gbs[reference][r], h2d);
                }
                line.append(String.format(col == 2 ? " %.2f" : ", %.2f", Medians.of(ratios)));
              }
              line.append(" |");
            }
            // Against the raw socket that does all a reader must, into the device: what is left is ours.
            for (int col : new int[] {2, 5}) {
              double[] ratios = new double[ROUNDS];
              for (int r = 0; r < ROUNDS; r++) {
                ratios[r] = gbs[col][r] / rawDevice[r];
              }
              line.append(String.format(col == 2 ? " %.2f" : ", %.2f", Medians.of(ratios)));
            }
            double[] atSendRatios = new double[ROUNDS];
            double[] lateOverAtSend = new double[ROUNDS];
            for (int r = 0; r < ROUNDS; r++) {
              atSendRatios[r] = gbs[6][r] / Math.min(gbs[0][r], h2d);
              lateOverAtSend[r] = gbs[2][r] / gbs[6][r];
            }
            line.append(String.format(" | on, bound at send %.2f GB/s, ratio %.2f; on (bound on arrival) / bound at send %.2f",
                Medians.of(gbs[6]), Medians.of(atSendRatios), Medians.of(lateOverAtSend)));
            if (UCX) {
              double[] ratios = new double[ROUNDS];
              for (int r = 0; r < ROUNDS; r++) {
                ratios[r] = ucxGbs[r] / gbs[2][r];
              }
              line.append(String.format(" | %s %.2f GB/s, to TCP on %.2f", ucxTransport, Medians.of(ucxGbs), Medians.of(ratios)));
            }
            System.out.println(line);
          }
        }
      }
    } finally {
      Files.deleteIfExists(file);
      Files.deleteIfExists(dir);
    }
  }

  private static final int ROUNDS = Integer.getInteger("gpudirect.bench.rounds", 5);
  private static final boolean UCX = Boolean.getBoolean("gpudirect.bench.ucx");
  /** Chunks of the pinned pool all columns share ({@code -Dgpudirect.bench.pinnedChunks=N}). */
  private static final int PINNED_CHUNKS = Integer.getInteger("gpudirect.bench.pinnedChunks", 64);

  /** Chunks in flight per stream: enough to keep every connection busy while earlier chunks copy. */
  private static int chunksPerStream(int streams) {
    return Integer.getInteger("gpudirect.bench.chunksPerStream", Math.max(1, Math.min(streams * 4, 48) / streams));
  }

  /** Whole-file reads into device memory through RemoteFileDataSource, over one client. */
  private static final class DeviceFetch implements AutoCloseable {
    private final BlockClient client;
    private final RemoteFileDataSource source;
    private final DeviceMemoryBuffer device;
    private final long bytes;
    private final String label;
    private final PinnedChunkPool pool;
    /** The most pinned chunks this fetch's reads held at once. */
    int peakChunks;
    /** CPU nanoseconds by thread role during this fetch's reads alone (with the profile on). */
    private final Map<String, Long> cpu = new TreeMap<>();
    private int reads;

    DeviceFetch(BlockServer server, PinnedChunkPool pool, CopyEngine engine, DeviceMemoryBuffer device,
        long bytes, int streams, int chunk, boolean checksums, String label) {
      this(server, pool, engine, device, bytes, streams, chunk, checksums, label, "tcp");
    }

    DeviceFetch(BlockServer server, PinnedChunkPool pool, CopyEngine engine, DeviceMemoryBuffer device,
        long bytes, int streams, int chunk, boolean checksums, String label, String transport) {
      this(server, pool, engine, device, bytes, streams, chunk, checksums, label, transport, false);
    }

    DeviceFetch(BlockServer server, PinnedChunkPool pool, CopyEngine engine, DeviceMemoryBuffer device,
        long bytes, int streams, int chunk, boolean checksums, String label, String transport, boolean bindAtSend) {
      int window = chunksPerStream(streams) * streams * chunk;
      ClientConfig config = ClientConfig.builder().streams(streams).chunkSize(chunk).maxBytesInFlight(window)
          .checksums(checksums).transport(transport)
          .rdmaProvider(io.gpudirect.verbs.provider.RdmaProvider.UCX).build();
      this.client = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()), config);
      this.source = new RemoteFileDataSource(client, "data.bin", client.stat("data.bin").version(), bytes, pool, engine,
          bindAtSend);
      this.pool = pool;
      this.device = device;
      this.bytes = bytes;
      this.label = String.format("%d streams, %d MiB, CRC32C %s", streams, chunk >> 20, label);
    }

    double gbPerSecond() {
      Map<String, Long> before = PROFILE ? cpuByRole() : Map.of();
      pool.takePeakChunksInUse();
      long start = System.nanoTime();
      source.deviceRead(0, device, ai.rapids.cudf.Cuda.DEFAULT_STREAM);
      double gbs = bytes / ((System.nanoTime() - start) / 1e9) / 1e9;
      peakChunks = Math.max(peakChunks, pool.takePeakChunksInUse());
      reads++;
      if (PROFILE) {
        cpuByRole().forEach((role, ns) -> cpu.merge(role, ns - before.getOrDefault(role, 0L), Long::sum));
      }
      return gbs;
    }

    /**
     * CPU seconds per GB by thread role over this fetch's reads (the fetches run one at a time),
     * and as "blocked ROLE" the seconds per GB that role's threads waited to enter a monitor.
     */
    void printProfile() {
      if (!PROFILE) {
        return;
      }
      StringBuilder line = new StringBuilder("    CPU s/GB by thread role (" + label + "):");
      cpu.forEach((role, ns) -> {
        double sPerGb = ns / 1e9 / (reads * bytes / 1e9);
        if (sPerGb >= 0.005) {
          line.append(String.format(" %s %.3f;", role, sPerGb));
        }
      });
      System.out.println(line);
    }

    @Override
    public void close() {
      client.close();
    }
  }

  private static final boolean PROFILE = Boolean.getBoolean("gpudirect.bench.profile");

  /** CPU nanoseconds of live threads, summed by name without its numbers (the thread's role). */
  private static Map<String, Long> cpuByRole() {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    Map<String, Long> byRole = new TreeMap<>();
    if (mx.isThreadContentionMonitoringSupported() && !mx.isThreadContentionMonitoringEnabled()) {
      mx.setThreadContentionMonitoringEnabled(true);
    }
    for (ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds())) {
      long ns = t == null ? -1 : mx.getThreadCpuTime(t.getThreadId());
      if (ns > 0) {
        String role = t.getThreadName().replaceAll("[-:.0-9]+(?=-|$)", "").replaceAll("-+$", "");
        byRole.merge(role, ns, Long::sum);
        // Time waiting to enter a monitor (the copy engine's lock, say): given in ms, kept in ns.
        if (t.getBlockedTime() > 0) {
          byRole.merge("blocked " + role, t.getBlockedTime() * 1_000_000L, Long::sum);
        }
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

  /**
   * The copy engine alone: the same pinned chunks copied until {@code bytes} have crossed; with
   * {@code crc}, each one's CRC32C computed by the GPU too (does the kernel keep up?).
   */
  private static double pinnedCopy(PinnedChunkPool pool, CopyEngine engine, DeviceMemoryBuffer device, long bytes,
      boolean crc) {
    long start = System.nanoTime();
    List<CompletableFuture<?>> copies = new ArrayList<>();
    for (long off = 0; off < bytes; off += pool.chunkSize()) {
      int len = (int) Math.min(pool.chunkSize(), bytes - off);
      PinnedChunk c = pool.acquire();
      copies.add(crc ? engine.copyToDeviceWithCrc32c(c, len, device.getAddress() + off)
          : engine.copyToDevice(c, len, device.getAddress() + off));
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
    return rawStreams(file, bytes, streams, (s, from, length) -> {
      ByteBuffer[] bufs = new ByteBuffer[buffers];
      for (int b = 0; b < buffers; b++) {
        bufs[b] = ByteBuffer.allocateDirect(size);
      }
      for (int b = 0; ; b = (b + 1) % buffers) {
        ByteBuffer buf = bufs[b].clear();
        int n = 0;
        while (buf.hasRemaining() && (n = s.read(buf)) >= 0) {
          // fill this buffer before the next, as a reader keeping the bytes would
        }
        if (n < 0) {
          return;
        }
      }
    });
  }

  /**
   * The most any reader of these bytes could do on this host at this stream count, beside ours:
   * the raw socket's streams ({@link #rawStreams}), each reader filling pinned chunks of the
   * same pool and queuing every full chunk's copy to its place in {@code device} on the same
   * copy engine, with as many chunks in flight per stream as our reads may hold; no protocol and
   * no checksum. It pays everything the host must for bytes that end on the GPU (the sender's
   * page-cache reads, loopback TCP, the writes into pinned memory and the DMA out of it), so a
   * gap between ours and it is ours, and a gap between it and the raw socket is the host's.
   * Timed until the last copy is done.
   */
  private static double rawToDevice(Path file, long bytes, int streams, PinnedChunkPool pool, CopyEngine engine,
      DeviceMemoryBuffer device) throws Exception {
    return rawStreams(file, bytes, streams, (s, from, length) -> {
      Semaphore inFlight = new Semaphore(chunksPerStream(streams));
      List<CompletableFuture<Void>> copies = new ArrayList<>();
      for (long off = 0; off < length; off += pool.chunkSize()) {
        int n = (int) Math.min(pool.chunkSize(), length - off);
        inFlight.acquire();
        PinnedChunk c = pool.acquire();
        ByteBuffer into = c.view().limit(n);
        while (into.hasRemaining()) {
          if (s.read(into) < 0) {
            c.close();
            throw new IOException("raw stream ended " + into.remaining() + " bytes short");
          }
        }
        copies.add(engine.copyToDevice(c, n, device.getAddress() + from + off)
            .whenComplete((v, e) -> inFlight.release()));
      }
      copies.forEach(CompletableFuture::join);
    }, engine::synchronize);
  }

  /** What the reader of one raw stream does with bytes {@code [from, from + length)} of the file. */
  private interface StreamReader {
    void read(SocketChannel s, long from, long length) throws Exception;
  }

  private static double rawStreams(Path file, long bytes, int streams, StreamReader reader) throws Exception {
    return rawStreams(file, bytes, streams, reader, () -> { });
  }

  /**
   * Each of {@code streams} plain sockets sends its share of the file with sendfile to a reader
   * running {@code reader}; GB/s from the start of the readers until all are done and then
   * {@code finish} has run.
   */
  private static double rawStreams(Path file, long bytes, int streams, StreamReader reader, Runnable finish)
      throws Exception {
    try (ServerSocketChannel listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
      long share = bytes / streams;
      List<Thread> senders = new ArrayList<>();
      List<Thread> readers = new ArrayList<>();
      List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
      for (int i = 0; i < streams; i++) {
        long from = i * share;
        long len = i == streams - 1 ? bytes - from : share;
        // Connected and accepted one at a time, so that each reader knows which share it gets.
        SocketChannel in = SocketChannel.open(listener.getLocalAddress());
        SocketChannel out = listener.accept();
        senders.add(new Thread(() -> {
          try (out; FileChannel f = FileChannel.open(file)) {
            long sent = 0;
            while (sent < len) {
              sent += f.transferTo(from + sent, len - sent, out);
            }
          } catch (IOException e) {
            failures.add(e);
          }
        }));
        readers.add(new Thread(() -> {
          try (in) {
            reader.read(in, from, len);
          } catch (Throwable e) {
            failures.add(e);
          }
        }));
      }
      senders.forEach(Thread::start);
      long start = System.nanoTime();
      readers.forEach(Thread::start);
      for (Thread t : readers) {
        t.join();
      }
      finish.run();
      double seconds = (System.nanoTime() - start) / 1e9;
      for (Thread t : senders) {
        t.join();
      }
      if (!failures.isEmpty()) {
        throw new IllegalStateException("Raw socket streams failed: " + failures.get(0), failures.get(0));
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
