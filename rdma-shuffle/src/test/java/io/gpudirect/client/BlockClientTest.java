package io.gpudirect.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.FileVersion;
import io.gpudirect.GpuDirectException;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.LoopbackCutter;
import io.gpudirect.testing.Settle;
import io.gpudirect.testing.TestFiles;
import io.gpudirect.transport.ConnectionLostException;
import io.gpudirect.transport.RequestTimeoutException;
import io.gpudirect.transport.TransportException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class BlockClientTest {
  static final int BIG = 5 * 1024 * 1024 + 123;

  @TempDir static Path root;
  static BlockServer server;
  static byte[] big;
  static byte[] small;

  BufferAllocator allocator;
  java.util.Set<Thread> threadsBefore;

  @BeforeAll
  static void startServer() throws IOException {
    big = TestFiles.write(root.resolve("data/big.bin"), BIG, 1);
    small = TestFiles.write(root.resolve("data/nested/small.bin"), 1000, 2);
    TestFiles.write(root.resolve("top.bin"), 10, 3);
    server = BlockServer.builder().root(root).port(0).build().start();
  }

  @AfterAll
  static void stopServer() {
    server.close();
  }

  @BeforeEach
  void before() {
    allocator = BufferAllocator.root().newChildAllocator("test", 256L << 20);
    threadsBefore = Settle.threadsNow();
  }

  @AfterEach
  void after() throws InterruptedException {
    allocator.assertNoLeaks();
    allocator.close();
    assertEquals(0, Settle.count(() -> Settle.threadsSince(threadsBefore, "gpudirect-client"), 0),
        "gpudirect-client threads leaked");
  }

  static InetSocketAddress address(int port) {
    return new InetSocketAddress("127.0.0.1", port);
  }

  static ClientConfig.Builder config() {
    return ClientConfig.builder().streams(3).chunkSize(256 * 1024)
        .maxBytesInFlight(1 << 20).retryBackoff(Duration.ofMillis(10))
        .requestTimeout(Duration.ofSeconds(10));
  }

  @Test
  void readsEqualTheFileForDirectAndHeapBuffersFromParallelReaders() throws Exception {
    try (BlockClient client = BlockClient.connect(address(server.port()), config().build())) {
      assertEquals("tcp", client.transport());
      // Whole file, direct buffer from an allocator.
      try (HostBuffer whole = allocator.allocate(BIG)) {
        ByteBuffer dst = whole.nioBuffer();
        client.read("data/big.bin", 0, dst);
        assertFalse(dst.hasRemaining());
        assertEquals(ByteBuffer.wrap(big), whole.nioBuffer());
      }
      ExecutorService pool = Executors.newFixedThreadPool(4);
      try {
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
          long seed = t;
          futures.add(pool.submit(() -> {
            Random random = new Random(seed);
            for (int i = 0; i < 25; i++) {
              int offset = random.nextInt(BIG);
              int length = random.nextInt(Math.min(BIG - offset, 1_500_000) + 1);
              boolean direct = random.nextBoolean();
              byte[] got = new byte[length];
              if (direct) {
                try (HostBuffer b = allocator.allocate(length + 7)) {
                  ByteBuffer dst = b.nioBuffer().position(7);
                  client.readAsync("/data/big.bin", offset, dst).get(10, TimeUnit.SECONDS);
                  b.nioBuffer().position(7).get(got);
                }
              } else {
                ByteBuffer dst = ByteBuffer.wrap(new byte[length + 3], 3, length);
                client.read("data/big.bin", offset, dst);
                System.arraycopy(dst.array(), 3, got, 0, length);
              }
              assertArrayEquals(Arrays.copyOfRange(big, offset, offset + length), got,
                  "offset " + offset + " length " + length + " direct " + direct);
            }
            return null;
          }));
        }
        for (Future<?> f : futures) {
          f.get(20, TimeUnit.SECONDS);
        }
      } finally {
        pool.shutdownNow();
      }
      TransferStats stats = client.stats();
      assertEquals(101, stats.reads());
      assertTrue(stats.bytesFetched() >= BIG && stats.fetchNanos() > 0, stats.toString());
    }
  }

  @Test
  void statAndList() {
    try (BlockClient client = BlockClient.connect(address(server.port()), config().build())) {
      FileEntry f = client.stat("data/big.bin");
      assertEquals(new FileEntry("data/big.bin", BIG, f.modifiedMillis(), false, f.version()), f);
      assertEquals(BIG, f.version().size());
      assertTrue(client.stat("/data").directory());
      assertEquals(List.of("data/big.bin", "data/nested/small.bin", "top.bin"),
          client.list("/").stream().map(FileEntry::path).toList());
      assertEquals(List.of("data/nested/small.bin"),
          client.list("data/nested/small.bin").stream().map(FileEntry::path).toList());
      assertEquals(1000, client.list("data/nested").get(0).length());
    }
  }

  /**
   * The server's counters come over the client's own connection, as stat and list do. One
   * stream: the server counts a read's bytes once they are sent, before it reads the STATUS
   * that follows on the same connection.
   */
  @Test
  void statusGivesTheServersCountersInItsOrder() {
    try (BlockClient client = BlockClient.connect(address(server.port()), config().streams(1).build())) {
      Map<String, Long> before = client.status();
      assertEquals("bytesSent", before.keySet().iterator().next());
      client.read("data/nested/small.bin", 0, ByteBuffer.allocate(1000));
      Map<String, Long> after = client.status();
      assertTrue(after.get("bytesSent") >= before.get("bytesSent") + 1000, after.toString());
      assertTrue(after.get("requests") >= before.get("requests") + 2, "the READ and this STATUS: " + after);
      assertTrue(after.get("connectionsActive") >= 1, "this client's stream: " + after);
    }
  }

  @Test
  void readPastEndAndMissingFileAreClearErrors() {
    try (BlockClient client = BlockClient.connect(address(server.port()), config().build())) {
      RemoteFileException past = assertThrows(RemoteFileException.class,
          () -> client.read("top.bin", 5, ByteBuffer.allocate(10)));
      assertEquals(ErrorCode.OUT_OF_RANGE, past.code());
      assertTrue(past.getMessage().contains("'top.bin'") && past.getMessage().contains("10 bytes")
          && past.getMessage().contains(server.address()), past.getMessage());
      assertThrows(RemoteFileException.class,
          () -> client.read("top.bin", 11, ByteBuffer.allocate(0)));

      RemoteFileException missing = assertThrows(RemoteFileException.class,
          () -> client.read("nope/missing.parquet", 0, ByteBuffer.allocate(1)));
      assertEquals(ErrorCode.NOT_FOUND, missing.code());
      assertEquals("nope/missing.parquet", missing.path());
      assertTrue(missing.getMessage().contains("'nope/missing.parquet'"), missing.getMessage());
      assertEquals(ErrorCode.NOT_FOUND,
          assertThrows(RemoteFileException.class, () -> client.stat("missing")).code());
      // The connection is fine afterwards.
      ByteBuffer ok = ByteBuffer.allocate(1000);
      client.read("data/nested/small.bin", 0, ok);
      assertArrayEquals(small, ok.array());
    }
  }

  @Test
  void pathsOutsideTheRootAreRefusedOneByOne(@TempDir Path outside) throws Exception {
    Files.writeString(outside.resolve("secret.txt"), "top secret");
    Path link = root.resolve("escape.txt");
    Files.createSymbolicLink(link, outside.resolve("secret.txt"));
    Path dirLink = root.resolve("escape-dir");
    Files.createSymbolicLink(dirLink, outside);
    Path fifo = root.resolve("pipe");
    Process p = new ProcessBuilder("mkfifo", fifo.toString()).start();
    assertEquals(0, p.waitFor());
    try (BlockClient client = BlockClient.connect(address(server.port()), config().build())) {
      expect(client, "../x", ErrorCode.OUTSIDE_ROOT, "climbs above");
      expect(client, "a/../../x", ErrorCode.OUTSIDE_ROOT, "climbs above");
      expect(client, "//etc/passwd", ErrorCode.OUTSIDE_ROOT, "absolute");
      // One leading '/' means the root (RemoteStore contract): /etc/passwd is looked up below it.
      expect(client, "/etc/passwd", ErrorCode.NOT_FOUND, "No such file");
      expect(client, "escape.txt", ErrorCode.OUTSIDE_ROOT, "resolves outside");
      expect(client, "escape-dir/secret.txt", ErrorCode.OUTSIDE_ROOT, "resolves outside");
      expect(client, "pipe", ErrorCode.NOT_A_FILE, "not a regular file");
      expect(client, "data", ErrorCode.NOT_A_FILE, "a directory");
      expect(client, "a\0b", ErrorCode.BAD_REQUEST, "NUL");
      // Listings never show what lies outside, nor the FIFO.
      assertEquals(List.of("data/big.bin", "data/nested/small.bin", "top.bin"),
          client.list("").stream().map(FileEntry::path).toList());
      ByteBuffer ok = ByteBuffer.allocate(1000);
      client.read("data/./nested//small.bin", 0, ok);
      assertArrayEquals(small, ok.array());
    } finally {
      Files.delete(link);
      Files.delete(dirLink);
      Files.delete(fifo);
    }
  }

  private static void expect(BlockClient client, String path, ErrorCode code, String words) {
    RemoteFileException e = assertThrows(RemoteFileException.class,
        () -> client.read(path, 0, ByteBuffer.allocate(4)), path);
    assertEquals(code, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains(words), e.getMessage());
    assertTrue(e.getMessage().contains(server.address()), e.getMessage());
  }

  @Test
  void chunksLargerThanTheServerLimitAreSplitByTheClient(@TempDir Path dir) throws IOException {
    byte[] data = TestFiles.write(dir.resolve("f.bin"), 3_000_000, 9);
    try (BlockServer limited = BlockServer.builder().root(dir).port(0)
            .maxReadLength(100_000).build().start();
        BlockClient client = BlockClient.connect(address(limited.port()),
            config().chunkSize(1 << 20).maxBytesInFlight(4 << 20).build())) {
      ByteBuffer dst = ByteBuffer.allocateDirect(data.length);
      client.read("f.bin", 0, dst);
      assertEquals(ByteBuffer.wrap(data), dst.flip());
      assertEquals(0, limited.stats().errors());
      assertTrue(limited.stats().requests() >= 30);
    }
  }

  @Test
  void transparentRetryAfterTheConnectionIsCutMidTransfer() throws Exception {
    // The first two connections (both streams) die after 300 kB; reconnects go through.
    try (LoopbackCutter cutter = new LoopbackCutter(server.port(), 300_000, 2);
        BlockClient client = BlockClient.connect(address(cutter.port()),
            config().streams(2).build());
        HostBuffer b = allocator.allocate(BIG)) {
      client.read("data/big.bin", 0, b.nioBuffer());
      assertEquals(ByteBuffer.wrap(big), b.nioBuffer());
      assertTrue(client.stats().retries() > 0);
    }
  }

  @Test
  void aReadIsSplitSoThatEveryStreamTakesPartButNotIntoChunksBelowOneMebibyte() throws Exception {
    try (BlockClient client = BlockClient.connect(address(server.port()),
            config().streams(4).chunkSize(4 << 20).maxBytesInFlight(8 << 20).build());
        HostBuffer b = allocator.allocate(4 << 20)) {
      FileVersion version = client.stat("data/big.bin").version();
      long before = server.stats().requests();
      // 4 MiB over 4 streams: four requests of 1 MiB, not one of the configured 4 MiB.
      client.read("data/big.bin", version, 0, b.nioBuffer());
      assertEquals(4, server.stats().requests() - before);
      assertEquals(ByteBuffer.wrap(big, 0, 4 << 20), b.nioBuffer());
    }
  }

  @Test
  void aStreamThatIsHeldUpGetsNoMoreChunksWhileTheOthersTakeTheRest() throws Exception {
    // The first connection stops forwarding the server's bytes inside its first chunk until
    // released. Of a read of 16 chunks, the held stream keeps only those it had taken (at most
    // StreamQueue.DEPTH); the free one takes all the others meanwhile. Chunks dealt out in
    // advance would leave half of them behind the held stream, and the free one idle.
    int chunk = 256 * 1024;
    int chunks = 16;
    try (LoopbackCutter held = new LoopbackCutter(server.port(), 100_000, 1).holdUntilReleased();
        BlockClient client = BlockClient.connect(address(held.port()),
            config().streams(2).chunkSize(chunk).maxBytesInFlight(chunks * chunk).build());
        HostBuffer b = allocator.allocate(chunks * chunk)) {
      CompletableFuture<Void> read = client.readAsync("data/big.bin", 0, b.nioBuffer());
      long expected = (long) (chunks - StreamQueue.DEPTH) * chunk;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (held.bytesFromServer(1) < expected && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertTrue(held.bytesFromServer(1) >= expected, "the free stream received "
          + held.bytesFromServer(1) + " bytes while the other was held; expected the "
          + (chunks - StreamQueue.DEPTH) + " chunks the held one had not taken: " + expected);
      assertEquals(1, held.faultsInjected(), "the first stream was not held");
      assertFalse(read.isDone());
      held.release();
      read.get(10, TimeUnit.SECONDS);
      assertEquals(ByteBuffer.wrap(big, 0, chunks * chunk), b.nioBuffer());
    }
  }

  @Test
  void everyOutstandingReadFailsPromptlyNamingThePeerWhenConnectionsKeepDropping()
      throws Exception {
    // Every connection dies after 100 kB, less than one chunk: no read can ever complete.
    try (LoopbackCutter cutter = new LoopbackCutter(server.port(), 100_000, Integer.MAX_VALUE);
        BlockClient client = BlockClient.connect(address(cutter.port()),
            config().streams(2).maxRetries(1).build())) {
      List<HostBuffer> buffers = new ArrayList<>();
      List<CompletableFuture<Void>> reads = new ArrayList<>();
      try {
        for (int i = 0; i < 4; i++) {
          HostBuffer b = allocator.allocate(1 << 20);
          buffers.add(b);
          reads.add(client.readAsync("data/big.bin", i * (1L << 20), b.nioBuffer()));
        }
        long t0 = System.nanoTime();
        for (CompletableFuture<Void> r : reads) {
          Throwable e = assertThrows(java.util.concurrent.ExecutionException.class,
              () -> r.get(10, TimeUnit.SECONDS)).getCause();
          assertInstanceOf(ConnectionLostException.class, e, String.valueOf(e));
          assertTrue(e.getMessage().contains("127.0.0.1:" + cutter.port())
              && e.getMessage().contains("big.bin"), e.getMessage());
        }
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "failed promptly");
      } finally {
        buffers.forEach(HostBuffer::close);
      }
    }
  }

  @Test
  void corruptionTiedToOneConnectionIsRetriedOnAnother() throws Exception {
    // The first connection flips a byte every 50 kB past 100 kB: any retry on it is corrupt too.
    try (LoopbackCutter bad = new LoopbackCutter(server.port(), 100_000, 1).corruptInsteadOfClose(50_000);
        BlockClient client = BlockClient.connect(address(bad.port()), config().streams(1).build());
        HostBuffer b = allocator.allocate(1 << 20)) {
      client.read("data/big.bin", 0, b.nioBuffer());
      assertEquals(ByteBuffer.wrap(big, 0, 1 << 20), b.nioBuffer());
      assertTrue(bad.faultsInjected() >= 1, "no byte was flipped");
      assertTrue(bad.connections() >= 2, "the retry should have gone over a new connection");
    }
  }

  @Test
  void aCorruptPayloadIsRetriedThenReportedNamingServerPathAndOffset() throws Exception {
    // Byte 100000 of what the first connection receives is flipped: inside the first payload.
    try (LoopbackCutter once = new LoopbackCutter(server.port(), 100_000, 1)
             .corruptInsteadOfClose(Long.MAX_VALUE);
        BlockClient client = BlockClient.connect(address(once.port()),
            config().streams(1).build());
        HostBuffer b = allocator.allocate(1 << 20)) {
      client.read("data/big.bin", 0, b.nioBuffer());
      assertEquals(ByteBuffer.wrap(big, 0, 1 << 20), b.nioBuffer());
      assertEquals(1, client.stats().retries());
    }
    // A byte in every 100 kB is flipped, so every attempt at a 200 kB read is corrupt.
    try (LoopbackCutter always = new LoopbackCutter(server.port(), 100_000, Integer.MAX_VALUE)
             .corruptInsteadOfClose(100_000);
        BlockClient client = BlockClient.connect(address(always.port()),
            config().streams(1).maxRetries(2).build())) {
      ByteBuffer dst = ByteBuffer.allocateDirect(200_000);
      io.gpudirect.transport.ChecksumMismatchException e = assertThrows(
          io.gpudirect.transport.ChecksumMismatchException.class,
          () -> client.read("data/big.bin", 4096, dst));
      assertTrue(e.getMessage().contains("'data/big.bin' at offset 4096")
          && e.getMessage().contains("127.0.0.1:" + always.port())
          && e.getMessage().contains("3 attempt"), e.getMessage());
    }
  }

  @Test
  void smallReadsAroundTheInlineChecksumSizeArriveIntactAndCorruptionIsStillCaught() throws Exception {
    // Payloads up to 64 KiB are checksummed without the pools on both ends (server: pread,
    // client: on the reader thread); one byte either side of that size takes the other path.
    try (BlockClient client = BlockClient.connect(address(server.port()), config().build())) {
      for (int length : new int[] {1, 4096, 65535, 65536, 65537, 200_000}) {
        for (int offset : new int[] {0, 4093, BIG - length}) {
          ByteBuffer dst = ByteBuffer.allocateDirect(length);
          client.read("data/big.bin", offset, dst);
          assertEquals(ByteBuffer.wrap(big, offset, length), dst.flip(),
              "offset " + offset + " length " + length);
        }
      }
      assertEquals(0, client.stats().retries());
    }
    // A byte flipped inside the fourth 32 KiB chunk of the first connection: caught by the
    // inline check, retried on a new connection, and the read comes out right.
    try (LoopbackCutter once = new LoopbackCutter(server.port(), 100_000, 1)
             .corruptInsteadOfClose(Long.MAX_VALUE);
        BlockClient client = BlockClient.connect(address(once.port()),
            config().streams(1).chunkSize(32 * 1024).build());
        HostBuffer b = allocator.allocate(1 << 20)) {
      client.read("data/big.bin", 0, b.nioBuffer());
      assertEquals(ByteBuffer.wrap(big, 0, 1 << 20), b.nioBuffer());
      assertEquals(1, client.stats().retries());
    }
  }

  @Test
  void anUnverifiedReadHandsOnTheServersCrc32cOfAllItsChunksUnchecked() throws Exception {
    // 1 MiB + 5 in 256 KiB chunks: five answers, five CRCs combined into that of the whole.
    int length = (1 << 20) + 5;
    try (BlockClient client = BlockClient.connect(address(server.port()), config().build());
        HostBuffer b = allocator.allocate(length)) {
      OptionalInt crc = client.readAsyncUnverified("data/big.bin", FileVersion.ANY, 777, b.nioBuffer()).get(10, TimeUnit.SECONDS);
      assertEquals(ByteBuffer.wrap(big, 777, length), b.nioBuffer());
      assertEquals(OptionalInt.of(crc32c(big, 777, length)), crc);
    }
    // A flipped byte is not caught here: the CRC handed on is the server's, which the caller's
    // own check (the GPU's, in device memory) then finds does not match the bytes.
    try (LoopbackCutter once = new LoopbackCutter(server.port(), 100_000, 1)
             .corruptInsteadOfClose(Long.MAX_VALUE);
        BlockClient client = BlockClient.connect(address(once.port()), config().streams(1).build());
        HostBuffer b = allocator.allocate(length)) {
      OptionalInt crc = client.readAsyncUnverified("data/big.bin", FileVersion.ANY, 0, b.nioBuffer()).get(10, TimeUnit.SECONDS);
      assertEquals(1, once.faultsInjected());
      assertEquals(OptionalInt.of(crc32c(big, 0, length)), crc);
      assertNotEquals(crc32c(big, 0, length), crc32c(b.nioBuffer()));
      assertEquals(0, client.stats().retries());
    }
    // Without checksums there is nothing to hand on.
    try (BlockClient client = BlockClient.connect(address(server.port()), config().checksums(false).build());
        HostBuffer b = allocator.allocate(4096)) {
      assertEquals(OptionalInt.empty(),
          client.readAsyncUnverified("data/big.bin", FileVersion.ANY, 0, b.nioBuffer()).get(10, TimeUnit.SECONDS));
      assertEquals(ByteBuffer.wrap(big, 0, 4096), b.nioBuffer());
    }
  }

  private static int crc32c(byte[] bytes, int offset, int length) {
    return crc32c(ByteBuffer.wrap(bytes, offset, length));
  }

  private static int crc32c(ByteBuffer bytes) {
    java.util.zip.CRC32C c = new java.util.zip.CRC32C();
    c.update(bytes.duplicate());
    return (int) c.getValue();
  }

  @Test
  void withChecksumsOffNoCrcIsSentOrChecked() throws Exception {
    try (BlockClient client = BlockClient.connect(address(server.port()), config().checksums(false).build());
        HostBuffer b = allocator.allocate(1 << 20)) {
      client.read("data/big.bin", 0, b.nioBuffer());
      assertEquals(ByteBuffer.wrap(big, 0, 1 << 20), b.nioBuffer());
    }
    // What the option gives up: a flipped byte now passes unnoticed (TCP's own checksum is all that is left).
    try (LoopbackCutter once = new LoopbackCutter(server.port(), 100_000, 1)
             .corruptInsteadOfClose(Long.MAX_VALUE);
        BlockClient client = BlockClient.connect(address(once.port()),
            config().streams(1).checksums(false).build());
        HostBuffer b = allocator.allocate(1 << 20)) {
      client.read("data/big.bin", 0, b.nioBuffer());
      assertNotEquals(ByteBuffer.wrap(big, 0, 1 << 20), b.nioBuffer());
      assertEquals(0, client.stats().retries());
    }
  }

  @Test
  void aStalledServerTimesOut() throws Exception {
    // Stalls (never closes) after the handshake and a little data.
    try (LoopbackCutter staller = new LoopbackCutter(server.port(), 200_000, Integer.MAX_VALUE)
             .stallInsteadOfClose();
        BlockClient client = BlockClient.connect(address(staller.port()),
            config().streams(1).requestTimeout(Duration.ofMillis(500)).build())) {
      ByteBuffer dst = ByteBuffer.allocateDirect(1 << 20);
      RequestTimeoutException e = assertThrows(RequestTimeoutException.class,
          () -> client.read("data/big.bin", 0, dst));
      assertTrue(e.getMessage().contains("timed out") && e.getMessage().contains("big.bin"),
          e.getMessage());
    }
  }

  @Test
  void aStalledServerTimesOutAReadWhoseCallerReadsItsAnswerItself() throws Exception {
    // One chunk that the caller waits for: the caller reads its answer itself and no timer task
    // watches it; the connection's reader thread keeps its deadline. Without that it would
    // wait for the stalled server forever.
    try (LoopbackCutter staller = new LoopbackCutter(server.port(), 200_000, Integer.MAX_VALUE)
             .stallInsteadOfClose();
        BlockClient client = BlockClient.connect(address(staller.port()), config().streams(1)
            .chunkSize(1 << 20).requestTimeout(Duration.ofMillis(500)).build())) {
      ByteBuffer dst = ByteBuffer.allocateDirect(1 << 20);
      long start = System.nanoTime();
      RequestTimeoutException e = assertThrows(RequestTimeoutException.class,
          () -> client.read("data/big.bin", 0, dst));
      assertTrue(e.getMessage().contains("timed out") && e.getMessage().contains("big.bin"),
          e.getMessage());
      assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10),
          "the timeout came late: " + (System.nanoTime() - start) / 1_000_000 + " ms");
    }
  }

  @Test
  void connectingToNothingFailsNamingTheServer() throws IOException {
    int port;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      port = s.getLocalPort();
    }
    TransportException e = assertThrows(TransportException.class, () -> BlockClient.connect(
        address(port), config().maxRetries(1).connectTimeout(Duration.ofSeconds(2)).build()));
    // Said once, with the cause and the question a user asks first.
    assertEquals("Cannot connect to gpudirect server 127.0.0.1:" + port + " after 2 attempts:"
        + " connection refused. Is a gpudirect server running there? (bin/gpudirect server"
        + " --root DIR --port " + port + ")", e.getMessage());
  }

  @Test
  void missingPathsAreToldAsTheUserAskedForThem() {
    try (BlockClient client = BlockClient.connect(address(server.port()), config().build())) {
      String at = " on gpudirect server " + server.address() + ": ";
      RemoteFileException list = assertThrows(RemoteFileException.class, () -> client.list("nosuch"));
      assertTrue(list.getMessage().startsWith("Cannot list 'nosuch'" + at), list.getMessage());
      RemoteFileException stat = assertThrows(RemoteFileException.class,
          () -> client.stat("trips/nosuch.parquet"));
      assertTrue(stat.getMessage().startsWith("Cannot access 'trips/nosuch.parquet'" + at),
          stat.getMessage());
      RemoteFileException read = assertThrows(RemoteFileException.class,
          () -> client.read("trips/nosuch.parquet", 0, ByteBuffer.allocate(1)));
      assertTrue(read.getMessage().startsWith("Cannot read 'trips/nosuch.parquet' at offset 0"
          + " (1 bytes)" + at), read.getMessage());
    }
  }

  @Test
  void connectionLimitIsReported(@TempDir Path dir) throws Exception {
    try (BlockServer one = BlockServer.builder().root(dir).port(0).maxConnections(1).build().start();
        BlockClient first = BlockClient.connect(address(one.port()), config().streams(1).build())) {
      TransportException e = assertThrows(TransportException.class, () -> BlockClient.connect(
          address(one.port()), config().streams(1).maxRetries(0).build()));
      // Names the server option that raises it: maxConnections alone is nothing an admin can set.
      assertTrue(e.getMessage().contains("limit of 1 connections")
          && e.getMessage().contains("--max-connections"), e.getMessage());
      assertEquals(1, one.stats().connectionsRejected());
      assertEquals(List.of(), first.list("/"));
    }
  }

  @Test
  void transportSelection() {
    try (BlockClient client = BlockClient.connect(address(server.port()),
        config().transport("auto").build())) {
      assertEquals("tcp", client.transport());
      // No libdisni on the build machines: TCP, saying so (TransportSelectorTest has the rest).
      assertTrue(client.transportReason().startsWith("transport=auto chose TCP: "),
          client.transportReason());
    }
    GpuDirectException e = assertThrows(GpuDirectException.class, () -> BlockClient.connect(
        address(server.port()), config().transport("rdma").build()));
    assertTrue(e.getMessage().startsWith("transport=rdma requested but RDMA is not available")
        || e.getMessage().contains("does not serve RDMA"), e.getMessage());
  }

  @Test
  void closedClientRefusesWork() {
    BlockClient client = BlockClient.connect(address(server.port()), config().build());
    client.close();
    client.close();
    assertThrows(GpuDirectException.class, () -> client.stat("top.bin"));
    assertTrue(client.readAsync("top.bin", 0, ByteBuffer.allocate(1)).isCompletedExceptionally());
  }
}
