package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.testing.Settle;
import io.gpudirect.testing.TestFiles;
import java.io.File;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Load: {@value #CLIENTS} clients of {@value #STREAMS} streams each against one server, every
 * client keeping {@value #STREAMS} random reads in flight, for {@code gpudirect.load.seconds}
 * (the build sets 60 s, the full run of issue 6; the Spark 4 build does not run this module's
 * tests, since nothing here depends on Spark). Every range read is checked by CRC32C against the same range of the source
 * bytes; file descriptors and gpudirect threads are counted before the server starts and after
 * everything closed, the server's own reads-in-flight gauge must return to zero, and the JVM's
 * direct and mapped memory must stay within what the clients' buffers and one read per
 * connection explain.
 */
class BlockServerLoadTest {
  static final int CLIENTS = 32;
  static final int STREAMS = 4;
  static final int FILES = 8;
  static final int FILE_BYTES = 8 << 20;
  static final int MAX_READ = 1 << 20;
  static final long SECONDS = Long.getLong("gpudirect.load.seconds", 15);

  @Test
  @Timeout(value = 600, unit = TimeUnit.SECONDS)
  void clientsTimesStreamsReadVerifiedBytes(@TempDir Path root) throws Exception {
    byte[][] source = new byte[FILES][];
    for (int f = 0; f < FILES; f++) {
      source[f] = TestFiles.write(root.resolve("load/f" + f + ".bin"), FILE_BYTES, 1000 + f);
    }
    long fdsBefore = openFileDescriptors();
    long threadsBefore = ownedThreads();
    AtomicLong bytes = new AtomicLong();
    AtomicLong reads = new AtomicLong();
    AtomicLong mismatches = new AtomicLong();
    MemorySampler memory = new MemorySampler();
    long elapsedNanos;
    try (BlockServer server = BlockServer.builder().root(root).port(0).maxConnections(CLIENTS * STREAMS + 8)
        .build().start()) {
      ClientConfig config = ClientConfig.builder().streams(STREAMS).requestTimeout(Duration.ofSeconds(60)).build();
      List<BlockClient> clients = new ArrayList<>();
      ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
      try {
        for (int c = 0; c < CLIENTS; c++) {
          clients.add(BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()), config));
        }
        long start = System.nanoTime();
        long deadline = start + TimeUnit.SECONDS.toNanos(SECONDS);
        List<Future<?>> workers = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
          BlockClient client = clients.get(c);
          SplittableRandom random = new SplittableRandom(c);
          workers.add(pool.submit(() -> {
            runClient(client, random, source, deadline, bytes, reads, mismatches);
            return null;
          }));
        }
        for (Future<?> w : workers) {
          w.get();
        }
        elapsedNanos = System.nanoTime() - start;
        memory.close();
        assertEquals(0, server.stats().readsInFlight(),
            "server reads in flight after every read completed");
      } finally {
        pool.shutdownNow();
        clients.forEach(BlockClient::close);
      }
    }
    memory.close();
    assertEquals(0, mismatches.get(), "ranges whose CRC32C differs from the source");
    // Direct memory: the clients' 128 buffers of 1 MiB, and the JDK's per-thread socket
    // buffers; the server itself holds none (sendfile), only transient read-only mappings,
    // at most one range of at most maxReadLength per connection.
    long clientBuffers = (long) CLIENTS * STREAMS * MAX_READ;
    long directGrowth = memory.maxDirect - memory.directBefore;
    assertTrue(directGrowth <= clientBuffers + (64L << 20), "direct memory peaked at "
        + memory.maxDirect + " bytes, " + directGrowth + " above the " + memory.directBefore
        + " in use before the load; the clients' buffers are " + clientBuffers);
    assertTrue(memory.maxMapped <= (long) CLIENTS * STREAMS * MAX_READ,
        "mapped memory peaked at " + memory.maxMapped + " bytes, more than one read per connection");
    assertEquals(0, BufferAllocator.root().outstandingBytes(), "host buffers left allocated");
    long threadsAfter = Settle.count(BlockServerLoadTest::ownedThreads, threadsBefore);
    assertEquals(threadsBefore, threadsAfter, () -> "gpudirect threads of servers and clients before and"
        + " after; now: " + Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
        .filter(n -> n.startsWith("gpudirect-")).sorted().toList());
    int cores = Math.max(2, Runtime.getRuntime().availableProcessors());
    for (String pool : SHARED_POOLS) {
      long n = Settle.liveThreads(pool);
      assertTrue(n <= cores, pool + " is a fixed pool of " + cores + " threads but has " + n);
    }
    long fdsAfter = Settle.count(BlockServerLoadTest::openFileDescriptors, fdsBefore);
    assertEquals(fdsBefore, fdsAfter, "open file descriptors before and after");
    double seconds = elapsedNanos / 1e9;
    String line = String.format("load: %d clients x %d streams, %.1f s: %d reads, %,d bytes verified by CRC32C,"
            + " %.0f MB/s, %.0f reads/s, on %d cores (%s); fds %d and gpudirect threads %d before and after;"
            + " peak direct %d MiB (%d before), peak mapped %d MiB, peak heap %d MiB",
        CLIENTS, STREAMS, seconds, reads.get(), bytes.get(), bytes.get() / seconds / 1e6, reads.get() / seconds,
        Runtime.getRuntime().availableProcessors(), LocalDate.now(), fdsAfter, threadsAfter,
        memory.maxDirect >> 20, memory.directBefore >> 20, memory.maxMapped >> 20, memory.maxHeap >> 20);
    System.out.println(line);
    assertTrue(reads.get() >= CLIENTS, "every client should have read something: " + reads.get());
  }

  /** Keeps {@value #STREAMS} reads of random ranges in flight until the deadline, checking each. */
  private static void runClient(BlockClient client, SplittableRandom random, byte[][] source, long deadline,
      AtomicLong bytes, AtomicLong reads, AtomicLong mismatches) {
    List<HostBuffer> buffers = new ArrayList<>();
    try {
      for (int s = 0; s < STREAMS; s++) {
        buffers.add(BufferAllocator.root().allocate(MAX_READ));
      }
      while (System.nanoTime() < deadline) {
        CompletableFuture<?>[] inFlight = new CompletableFuture<?>[STREAMS];
        int[] file = new int[STREAMS];
        int[] offset = new int[STREAMS];
        ByteBuffer[] dst = new ByteBuffer[STREAMS];
        for (int s = 0; s < STREAMS; s++) {
          file[s] = random.nextInt(FILES);
          int length = 1 + random.nextInt(MAX_READ);
          offset[s] = random.nextInt(FILE_BYTES - length + 1);
          dst[s] = buffers.get(s).nioBuffer().limit(length);
          inFlight[s] = client.readAsync("load/f" + file[s] + ".bin", offset[s], dst[s]);
        }
        for (int s = 0; s < STREAMS; s++) {
          inFlight[s].join();
          ByteBuffer got = dst[s].flip();
          int length = got.remaining();
          CRC32C received = new CRC32C();
          received.update(got);
          CRC32C expected = new CRC32C();
          expected.update(source[file[s]], offset[s], length);
          if (received.getValue() != expected.getValue()) {
            mismatches.incrementAndGet();
          }
          bytes.addAndGet(length);
          reads.incrementAndGet();
        }
      }
    } finally {
      buffers.forEach(HostBuffer::close);
    }
  }

  /** Peaks of the JVM's direct, mapped and heap memory, sampled every 20 ms while open. */
  private static final class MemorySampler implements AutoCloseable {
    volatile long maxDirect;
    volatile long maxMapped;
    volatile long maxHeap;
    /**
     * Direct memory in use before the load, once the garbage of earlier tests in this JVM is
     * collected: their closed connections' buffers are freed only by a GC, and are not this
     * load's.
     */
    final long directBefore = settledDirect();
    private volatile boolean done;
    private final Thread thread = new Thread(this::sample, "test-memory-sampler");

    private static long settledDirect() {
      java.lang.management.BufferPoolMXBean direct = java.lang.management.ManagementFactory
          .getPlatformMXBeans(java.lang.management.BufferPoolMXBean.class).stream()
          .filter(p -> p.getName().equals("direct")).findFirst().orElseThrow();
      long used = Long.MAX_VALUE;
      for (int i = 0; i < 20 && direct.getMemoryUsed() < used; i++) {
        used = direct.getMemoryUsed();
        System.gc();
        try {
          Thread.sleep(50); // the cleaners free direct buffers after the GC, on their own thread
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      return direct.getMemoryUsed();
    }

    MemorySampler() {
      thread.setDaemon(true);
      thread.start();
    }

    private void sample() {
      List<java.lang.management.BufferPoolMXBean> pools =
          java.lang.management.ManagementFactory.getPlatformMXBeans(java.lang.management.BufferPoolMXBean.class);
      java.lang.management.MemoryMXBean heap = java.lang.management.ManagementFactory.getMemoryMXBean();
      while (!done) {
        for (java.lang.management.BufferPoolMXBean pool : pools) {
          if (pool.getName().equals("direct")) {
            maxDirect = Math.max(maxDirect, pool.getMemoryUsed());
          } else if (pool.getName().equals("mapped")) {
            maxMapped = Math.max(maxMapped, pool.getMemoryUsed());
          }
        }
        maxHeap = Math.max(maxHeap, heap.getHeapMemoryUsage().getUsed());
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          return;
        }
      }
    }

    @Override
    public void close() throws InterruptedException {
      done = true;
      thread.join();
    }
  }

  /**
   * The checksum pools (the server's and the client context's: fixed size, threads started as
   * work comes) and the client context's handshake timer do not grow with load; they are
   * bounded separately.
   */
  static final String[] SHARED_POOLS = {"gpudirect-crc-verify", "gpudirect-server-checksum",
      "gpudirect-handshake-deadline"};

  private static long ownedThreads() {
    long shared = 0;
    for (String pool : SHARED_POOLS) {
      shared += Settle.liveThreads(pool);
    }
    return Settle.liveThreads("gpudirect-") - shared;
  }

  private static long openFileDescriptors() {
    String[] fds = new File("/proc/self/fd").list();
    return Objects.requireNonNull(fds, "/proc/self/fd is not readable").length;
  }
}
