package io.gpudirect.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.protocol.ShuffleRead;
import io.gpudirect.protocol.StatRequest;
import io.gpudirect.protocol.StatResponse;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.BlockServerBuilder;
import io.gpudirect.testing.FileChanges;
import io.gpudirect.testing.LoopbackCutter;
import io.gpudirect.testing.SparkShuffleLayout;
import io.gpudirect.testing.TestFiles;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What every {@link Transport} must do, run against a real server. Each transport runs it by
 * overriding {@link #transport()}, and where its server or its faults differ, the hooks below
 * ({@code TcpTransportConformanceTest}, {@code RdmaOverVerbsDoubleConformanceTest}).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class TransportConformanceTest {
  @TempDir static Path root;
  protected BlockServer server;
  protected static byte[] data;
  /** Shuffle 1, map 2, of the executor whose shuffle directories the server serves too: its partitions. */
  protected static byte[][] map2;

  protected abstract Transport transport();

  /** The server every test reads from; a transport adds what it needs (RDMA, its verbs). */
  protected BlockServerBuilder configure(BlockServerBuilder builder) {
    return builder;
  }

  /**
   * A way to the server whose data path stalls (reads stay outstanding however long the test
   * takes) and whose server side can then die. TCP: a proxy that stalls after 1 MiB and is
   * closed to kill the peer.
   */
  protected FaultyPath faultyPath() throws IOException {
    LoopbackCutter stall = new LoopbackCutter(server.port(), 1 << 20, Integer.MAX_VALUE).stallInsteadOfClose();
    return new FaultyPath() {
      @Override
      public InetSocketAddress address() {
        return new InetSocketAddress("127.0.0.1", stall.port());
      }

      @Override
      public void killPeer() {
        stall.resetAll();
      }

      @Override
      public void close() throws IOException {
        stall.close();
      }
    };
  }

  /** See {@link #faultyPath()}. */
  protected interface FaultyPath extends AutoCloseable {
    InetSocketAddress address();

    /** The server end of every connection on this path dies without a goodbye. */
    void killPeer();

    @Override
    void close() throws IOException;
  }

  @BeforeAll
  void start() throws IOException {
    data = TestFiles.write(root.resolve("d.bin"), 8 << 20, 17);
    SparkShuffleLayout shuffle = new SparkShuffleLayout(List.of(root.resolve("shuffle/blockmgr-a"),
        root.resolve("shuffle/blockmgr-b")), 64);
    for (Path d : shuffle.localDirs()) {
      java.nio.file.Files.createDirectories(d);
    }
    map2 = new byte[][] {Arrays.copyOf(data, 3000), new byte[0], Arrays.copyOfRange(data, 100, (6 << 20) + 100)};
    shuffle.write(1, 2, map2);
    server = configure(BlockServer.builder().root(root).shuffleDirectories(shuffle.localDirs(), 64).port(0)
        .maxReadLength(4 << 20)).build().start();
  }

  @AfterAll
  void stop() {
    server.close();
  }

  protected Connection connect() {
    return connect(new InetSocketAddress("127.0.0.1", server.port()));
  }

  protected Connection connect(InetSocketAddress address) {
    return transport().connect(address,
        new ConnectionOptions(null, Duration.ofSeconds(5), "gpudirect-client-conformance"));
  }

  @Test
  void pipelinedReadsLandInTheirBuffers() throws Exception {
    try (Connection c = connect()) {
      assertEquals(4 << 20, c.maxReadLength());
      assertEquals(server.port(), c.peer().getPort());
      List<ByteBuffer> buffers = new ArrayList<>();
      List<CompletableFuture<Void>> reads = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        ByteBuffer dst = i % 2 == 0 ? ByteBuffer.allocateDirect(1 << 20)
            : ByteBuffer.allocate(1 << 20);
        buffers.add(dst);
        reads.add(c.read(new ReadRequest(i + 1, "d.bin", i * (1L << 20), 1 << 20), dst));
      }
      for (int i = 0; i < 8; i++) {
        reads.get(i).get(10, TimeUnit.SECONDS);
        byte[] got = new byte[1 << 20];
        buffers.get(i).flip().get(got);
        assertArrayEquals(Arrays.copyOfRange(data, i << 20, (i + 1) << 20), got, "chunk " + i);
      }
    }
  }

  @Test
  void readsIntoMemoryBoundOnArrivalLandInItAndBindItOnce() throws Exception {
    // Where the transport binds (at send over RDMA, at the payload's first byte over TCP) is
    // its own; that each read binds its memory once and its bytes land there is common.
    try (Connection c = connect()) {
      int n = 8;
      List<ByteBuffer> buffers = new ArrayList<>();
      AtomicIntegerArray binds = new AtomicIntegerArray(n);
      List<CompletableFuture<OptionalInt>> reads = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int index = i;
        int len = i % 4 == 3 ? 1000 : 1 << 20;
        ByteBuffer dst = ByteBuffer.allocateDirect(len);
        buffers.add(dst);
        PayloadMemory memory = () -> {
          binds.incrementAndGet(index);
          return dst.duplicate();
        };
        ReadRequest r = new ReadRequest(i + 1, "d.bin", (long) i << 20, len);
        reads.add(i % 2 == 0 ? c.readUnverified(r, memory)
            : c.read(r, memory).thenApply(v -> OptionalInt.empty()));
      }
      for (int i = 0; i < n; i++) {
        OptionalInt crc = reads.get(i).get(10, TimeUnit.SECONDS);
        int len = buffers.get(i).capacity();
        byte[] want = Arrays.copyOfRange(data, i << 20, (i << 20) + len);
        byte[] got = new byte[len];
        buffers.get(i).duplicate().get(got);
        assertArrayEquals(want, got, "read " + i);
        assertEquals(1, binds.get(i), "read " + i + " bound its memory once");
        if (crc.isPresent()) {
          CRC32C expected = new CRC32C();
          expected.update(want);
          assertEquals((int) expected.getValue(), crc.getAsInt(), "read " + i + ": the server's CRC32C");
        }
      }
      assertTrue(c.isOpen());
    }
  }

  @Test
  void controlCallsAndRefusals() throws Exception {
    try (Connection c = connect()) {
      StatResponse s = (StatResponse) c.call(new StatRequest(1, "d.bin")).get(5, TimeUnit.SECONDS);
      assertEquals(8 << 20, s.entry().length());
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> c.read(new ReadRequest(2, "none", 0, 1), ByteBuffer.allocate(1)).get(5, TimeUnit.SECONDS));
      assertEquals(ErrorCode.NOT_FOUND, assertInstanceOf(ServerErrorException.class, e.getCause()).code());
      assertTrue(c.isOpen(), "a refusal leaves the connection usable");
    }
  }

  /**
   * Windows of shuffle blocks, pipelined: each lands in the memory bound for it once its answer
   * told its length (a small block, an empty one, a long one's two windows, the second naming
   * the first's version); a refusal names the block and leaves the connection usable; memory
   * that cannot be bound fails that window alone.
   */
  @Test
  void shuffleWindowsLandInTheMemoryBoundForThemAndRefusalsNameTheBlock() throws Exception {
    int window = 4 << 20;
    try (Connection c = connect()) {
      CompletableFuture<ReceivedWindow> small = c.readBlock(new ShuffleRead(1, ShuffleBlockId.of(1, 2, 0), 0,
          window, FileVersion.ANY), a -> ByteBuffer.allocate(a.length()));
      List<ByteBuffer> bound = new ArrayList<>();
      BlockMemory memory = a -> {
        ByteBuffer b = a.length() > 1000 ? ByteBuffer.allocateDirect(a.length()) : ByteBuffer.allocate(a.length());
        synchronized (bound) {
          bound.add(b);
        }
        return b;
      };
      CompletableFuture<ReceivedWindow> empty = c.readBlock(new ShuffleRead(2, ShuffleBlockId.of(1, 2, 1), 0,
          window, FileVersion.ANY), memory);
      CompletableFuture<ReceivedWindow> first = c.readBlock(new ShuffleRead(3, ShuffleBlockId.of(1, 2, 2), 0,
          window, FileVersion.ANY), memory);
      CompletableFuture<ReceivedWindow> missing = c.readBlock(new ShuffleRead(4, ShuffleBlockId.of(1, 9, 0), 0,
          window, FileVersion.ANY), memory);
      CompletableFuture<ReceivedWindow> unbindable = c.readBlock(new ShuffleRead(5, ShuffleBlockId.of(1, 2, 0), 0,
          window, FileVersion.ANY), a -> {
            throw new IllegalStateException("no memory for it");
          });

      assertEquals(new ShuffleData(1, 3000, small.get(10, TimeUnit.SECONDS).header().version(), 0, 3000),
          small.get().header());
      assertEquals(0, empty.get(10, TimeUnit.SECONDS).header().length());
      ShuffleData head = first.get(10, TimeUnit.SECONDS).header();
      assertEquals(map2[2].length, head.blockLength());
      assertEquals(window, head.length());
      ShuffleData rest = c.readBlock(new ShuffleRead(6, ShuffleBlockId.of(1, 2, 2), window, window, head.version()),
          memory).get(10, TimeUnit.SECONDS).header();
      assertEquals(new ShuffleData(6, map2[2].length, head.version(), window, map2[2].length - window), rest);
      ByteBuffer whole = ByteBuffer.allocate(map2[2].length);
      for (ByteBuffer b : bound) {
        assertFalse(b.hasRemaining(), "filled");
        whole.put(b.flip());
      }
      assertArrayEquals(map2[2], whole.array());

      ExecutionException refused = assertThrows(ExecutionException.class, () -> missing.get(10, TimeUnit.SECONDS));
      ServerErrorException e = assertInstanceOf(ServerErrorException.class, refused.getCause());
      assertEquals(ErrorCode.NOT_FOUND, e.code());
      assertTrue(e.getMessage().contains("shuffle_1_9_0") && e.getMessage().contains("shuffle 1, map 9, reduce 0"),
          e.getMessage());
      ExecutionException noMemory = assertThrows(ExecutionException.class, () -> unbindable.get(10, TimeUnit.SECONDS));
      assertTrue(noMemory.getCause().getMessage().contains("no memory for it"), noMemory.getCause().toString());
      assertTrue(c.isOpen(), "a refusal and a window with no memory leave the connection usable");
      ByteBuffer again = ByteBuffer.allocate(3000);
      c.readBlock(new ShuffleRead(7, ShuffleBlockId.of(1, 2, 0), 0, window, FileVersion.ANY), a -> again)
          .get(10, TimeUnit.SECONDS);
      assertArrayEquals(map2[0], again.array());
    }
  }

  @Test
  void abortFailsEverythingOutstandingWithTheCause() throws Exception {
    // Over a path that stalls, so no read can finish before the abort, however busy the machine is.
    try (FaultyPath stall = faultyPath()) {
      Connection c = connect(stall.address());
      List<CompletableFuture<Void>> reads = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        reads.add(c.read(new ReadRequest(i + 1, "d.bin", 0, 4 << 20),
            ByteBuffer.allocateDirect(4 << 20)));
      }
      GpuDirectException cause = new ConnectionLostException("test abort", null);
      c.abort(cause);
      for (CompletableFuture<Void> r : reads) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> r.get(5, TimeUnit.SECONDS));
        assertSame(cause, e.getCause());
      }
      assertFalse(c.isOpen());
      ExecutionException after = assertThrows(ExecutionException.class,
          () -> c.read(new ReadRequest(99, "d.bin", 0, 1), ByteBuffer.allocate(1)).get(5, TimeUnit.SECONDS));
      assertSame(cause, after.getCause());
      c.close();
    }
  }

  @Test
  void moreReadsThanAnyQueueDepthAllCompleteInTheirBuffers() throws Exception {
    try (Connection c = connect()) {
      int n = 64;
      int len = 64 << 10;
      List<ByteBuffer> buffers = new ArrayList<>();
      List<CompletableFuture<Void>> reads = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        ByteBuffer dst = ByteBuffer.allocateDirect(len);
        buffers.add(dst);
        reads.add(c.read(new ReadRequest(100 + i, "d.bin", (long) i * 97_000, len), dst));
      }
      for (int i = 0; i < n; i++) {
        reads.get(i).get(10, TimeUnit.SECONDS);
        byte[] got = new byte[len];
        buffers.get(i).flip().get(got);
        int from = i * 97_000;
        assertArrayEquals(Arrays.copyOfRange(data, from, from + len), got, "read " + i);
      }
      assertTrue(c.isOpen());
    }
  }

  @Test
  void peerDyingMidReadFailsEveryOutstandingReadNamingTheServer() throws Exception {
    try (FaultyPath path = faultyPath()) {
      Connection c = connect(path.address());
      List<CompletableFuture<Void>> reads = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        reads.add(c.read(new ReadRequest(i + 1, "d.bin", 0, 4 << 20), ByteBuffer.allocateDirect(4 << 20)));
      }
      path.killPeer();
      for (CompletableFuture<Void> r : reads) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> r.get(10, TimeUnit.SECONDS));
        TransportException t = assertInstanceOf(TransportException.class, e.getCause());
        assertTrue(t.getMessage().contains("127.0.0.1"), "names the server: " + t.getMessage());
      }
      assertFalse(c.isOpen());
      c.close();
    }
  }

  @Test
  void zeroLengthAndOutOfRangeReads() throws Exception {
    try (Connection c = connect()) {
      c.read(new ReadRequest(1, "d.bin", 8 << 20, 0), ByteBuffer.allocateDirect(0)).get(5, TimeUnit.SECONDS);
      ExecutionException e = assertThrows(ExecutionException.class, () -> c.read(
          new ReadRequest(2, "d.bin", (8 << 20) - 10, 20), ByteBuffer.allocateDirect(20)).get(5, TimeUnit.SECONDS));
      assertEquals(ErrorCode.OUT_OF_RANGE, assertInstanceOf(ServerErrorException.class, e.getCause(),
          String.valueOf(e.getCause())).code());
      ExecutionException big = assertThrows(ExecutionException.class, () -> c.read(
          new ReadRequest(3, "d.bin", 0, 5 << 20), ByteBuffer.allocateDirect(5 << 20)).get(5, TimeUnit.SECONDS));
      assertEquals(ErrorCode.LIMIT_EXCEEDED, assertInstanceOf(ServerErrorException.class, big.getCause(),
          String.valueOf(big.getCause())).code());
      assertTrue(c.isOpen(), "refusals leave the connection usable");
    }
  }

  /** A read the caller will wait for, as the client sends it: for the caller to read where the connection allows. */
  static CompletableFuture<Void> readForCaller(Connection c, ReadRequest r, ByteBuffer dst) {
    return c.callerReads().map(caller -> caller.readForCaller(r, dst)).orElseGet(() -> c.read(r, dst));
  }

  static void readAnswersUntil(Connection c, CompletableFuture<?> done) {
    c.callerReads().ifPresent(caller -> caller.readAnswersUntil(done));
  }

  @Test
  void aCallerWaitingForItsOwnReadGetsItAmongPipelinedOnes() throws Exception {
    try (Connection c = connect()) {
      for (int round = 0; round < 20; round++) {
        // Reads for the reader thread before and after the one the caller waits for, so that
        // whoever reads first reads the others' answers too.
        List<ByteBuffer> buffers = new ArrayList<>();
        List<CompletableFuture<Void>> reads = new ArrayList<>();
        List<Integer> offsets = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
          int offset = round * 100_003 + i * 70_001;
          int len = i == 1 ? 4096 : 300_000;
          ByteBuffer dst = ByteBuffer.allocateDirect(len);
          ReadRequest r = new ReadRequest(round * 10L + i + 1, "d.bin", offset, len);
          CompletableFuture<Void> f = i == 1 ? readForCaller(c, r, dst) : c.read(r, dst);
          if (i == 1) {
            readAnswersUntil(c, f);
          }
          buffers.add(dst);
          reads.add(f);
          offsets.add(offset);
        }
        for (int i = 0; i < 3; i++) {
          reads.get(i).get(10, TimeUnit.SECONDS);
          ByteBuffer got = buffers.get(i).flip();
          assertEquals(ByteBuffer.wrap(data, offsets.get(i), got.remaining()), got, "round " + round + " read " + i);
        }
      }
      assertTrue(c.isOpen());
    }
  }

  @Test
  void abortWhileACallerWaitsForItsReadFailsIt() throws Exception {
    try (FaultyPath stall = faultyPath()) {
      Connection c = connect(stall.address());
      // More than the path lets through before it stalls: the caller waits in its read.
      CompletableFuture<Void> f = readForCaller(c, new ReadRequest(1, "d.bin", 0, 2 << 20),
          ByteBuffer.allocateDirect(2 << 20));
      GpuDirectException cause = new ConnectionLostException("test abort", null);
      Thread aborter = new Thread(() -> {
        try {
          Thread.sleep(200);
        } catch (InterruptedException e) {
          return;
        }
        c.abort(cause);
      });
      aborter.start();
      readAnswersUntil(c, f);
      ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
      assertSame(cause, e.getCause());
      aborter.join();
      assertFalse(c.isOpen());
      c.close();
    }
  }

  /**
   * A connection closed while other threads submit reads on it: every read ends, with its bytes
   * or with a transport's error, no submission throws, and no reader is left waiting. The close
   * lands among submissions, each reader keeping eight reads outstanding until it sees the
   * connection closed.
   */
  @Test
  void closingWhileOtherThreadsReadEndsEveryReadOneWayOrTheOther() throws Exception {
    int len = 64 << 10;
    record Submitted(int at, ByteBuffer dst, CompletableFuture<Void> read) {}
    for (int round = 0; round < 10; round++) {
      Connection c = connect();
      AtomicLong ids = new AtomicLong();
      AtomicBoolean closed = new AtomicBoolean();
      List<Throwable> wrong = Collections.synchronizedList(new ArrayList<>());
      CountDownLatch finished = new CountDownLatch(1);
      List<Thread> readers = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        Thread reader = new Thread(() -> {
          ArrayDeque<Submitted> outstanding = new ArrayDeque<>();
          try {
            while (!closed.get() || !outstanding.isEmpty()) {
              if (!closed.get() && outstanding.size() < 8) {
                long id = ids.incrementAndGet();
                int at = (int) ((id * 7_919) % ((8 << 20) - len));
                ByteBuffer dst = ByteBuffer.allocateDirect(len);
                outstanding.add(new Submitted(at, dst, c.read(new ReadRequest(id, "d.bin", at, len), dst)));
                continue;
              }
              Submitted r = outstanding.poll();
              try {
                r.read().get(10, TimeUnit.SECONDS);
                byte[] got = new byte[len];
                r.dst().flip().get(got);
                if (!Arrays.equals(Arrays.copyOfRange(data, r.at(), r.at() + len), got)) {
                  wrong.add(new AssertionError("wrong bytes in a read at " + r.at() + " that finished"));
                }
                finished.countDown();
              } catch (ExecutionException e) {
                if (!(e.getCause() instanceof GpuDirectException)) {
                  wrong.add(e.getCause());
                }
              }
            }
          } catch (Throwable e) {
            wrong.add(e);
          }
        });
        reader.start();
        readers.add(reader);
      }
      assertTrue(finished.await(10, TimeUnit.SECONDS), "no read finished: " + wrong);
      Thread.sleep(round % 4 * 5);
      closed.set(true);
      c.close();
      for (Thread reader : readers) {
        reader.join(15_000);
        assertFalse(reader.isAlive(), "a reader still waiting 15 s after the close");
      }
      assertTrue(wrong.isEmpty(), "reads that ended wrong: " + wrong);
      assertFalse(c.isOpen());
    }
  }

  @Test
  void smallAndLargeAnswersAndRefusalsPipelinedInAnyOrderAllLandRight() throws Exception {
    // Small answers come whole in one read where the transport can; large payloads straight
    // into their buffers; short ERROR frames in between must not throw either off.
    try (Connection c = connect()) {
      java.util.Random random = new java.util.Random(5);
      for (int round = 0; round < 10; round++) {
        List<CompletableFuture<?>> answers = new ArrayList<>();
        List<ByteBuffer> buffers = new ArrayList<>();
        List<Integer> offsets = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
          long id = round * 100L + i + 1;
          int kind = random.nextInt(5);
          if (kind == 0) {
            answers.add(c.read(new ReadRequest(id, "missing", 0, 10), ByteBuffer.allocate(10)));
            buffers.add(null);
            offsets.add(-1);
          } else if (kind == 1) {
            answers.add(c.call(new StatRequest(id, "d.bin")));
            buffers.add(null);
            offsets.add(-2);
          } else {
            int len = kind == 2 ? 1 + random.nextInt(65536) : 65537 + random.nextInt(1 << 20);
            int offset = random.nextInt((8 << 20) - len);
            ByteBuffer dst = random.nextBoolean() ? ByteBuffer.allocateDirect(len) : ByteBuffer.allocate(len);
            answers.add(c.read(new ReadRequest(id, "d.bin", offset, len), dst));
            buffers.add(dst);
            offsets.add(offset);
          }
        }
        for (int i = 0; i < answers.size(); i++) {
          CompletableFuture<?> f = answers.get(i);
          if (offsets.get(i) == -1) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
            assertEquals(ErrorCode.NOT_FOUND, assertInstanceOf(ServerErrorException.class, e.getCause()).code());
          } else if (offsets.get(i) == -2) {
            assertEquals(8 << 20, ((StatResponse) f.get(10, TimeUnit.SECONDS)).entry().length());
          } else {
            f.get(10, TimeUnit.SECONDS);
            ByteBuffer got = buffers.get(i).flip();
            assertEquals(ByteBuffer.wrap(data, offsets.get(i), got.remaining()), got,
                "round " + round + " answer " + i);
          }
        }
      }
      assertTrue(c.isOpen());
    }
  }

  /**
   * A file that changes between two reads of one version (the first part read, then the file
   * changed, then the rest asked for) is refused at the very next read, small or large, with
   * FILE_CHANGED naming the path; the connection carries on, and the new version reads right.
   */
  @ParameterizedTest
  @EnumSource(FileChanges.class)
  void aReadOfAChangedFileIsRefusedAtOnce(FileChanges change) throws Exception {
    Path file = root.resolve("changing-" + change + ".bin");
    byte[] before = FileChanges.writeSettled(file, 2 << 20, 23);
    try (Connection c = connect()) {
      String path = file.getFileName().toString();
      FileVersion version = ((StatResponse) c.call(new StatRequest(1, path))
          .get(5, TimeUnit.SECONDS)).entry().version();
      assertEquals(2 << 20, version.size());
      ByteBuffer first = ByteBuffer.allocateDirect(1 << 20);
      c.read(new ReadRequest(2, path, version, 0, 1 << 20), first).get(5, TimeUnit.SECONDS);
      assertEquals(ByteBuffer.wrap(before, 0, 1 << 20), first.flip());

      byte[] after = change.apply(file, 29);

      for (int length : new int[] {4096, 1 << 20}) {
        long id = 3L + length;
        ExecutionException e = assertThrows(ExecutionException.class, () -> c.read(
            new ReadRequest(id, path, version, 1 << 19, length), ByteBuffer.allocateDirect(length))
            .get(5, TimeUnit.SECONDS), change + ": a read of " + length + " bytes");
        ServerErrorException refused = assertInstanceOf(ServerErrorException.class, e.getCause());
        assertEquals(ErrorCode.FILE_CHANGED, refused.code(), refused.getMessage());
        assertTrue(refused.getMessage().contains("'" + path + "'")
            && refused.getMessage().contains(version.describe()), refused.getMessage());
      }
      assertTrue(c.isOpen(), "a refusal leaves the connection usable");
      if (after.length > 4096) {
        FileVersion now = ((StatResponse) c.call(new StatRequest(9, path))
            .get(5, TimeUnit.SECONDS)).entry().version();
        ByteBuffer fresh = ByteBuffer.allocateDirect(4096);
        c.read(new ReadRequest(10, path, now, 0, 4096), fresh).get(5, TimeUnit.SECONDS);
        assertEquals(ByteBuffer.wrap(after, 0, 4096), fresh.flip());
      }
    }
  }
}
