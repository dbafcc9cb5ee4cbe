package io.gpudirect.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.server.rdma.RdmaService;
import io.gpudirect.testing.Settle;
import io.gpudirect.testing.TestFiles;
import io.gpudirect.transport.ConnectionLostException;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.verbs.Access;
import io.gpudirect.verbs.LoopbackVerbsDouble;
import io.gpudirect.verbs.MemoryRegion;
import io.gpudirect.verbs.RdmaException;
import io.gpudirect.verbs.RdmaUnavailableException;
import io.gpudirect.verbs.WorkCompletion;
import io.gpudirect.verbs.disni.DisniVerbs;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What only RDMA has: keys, bounds, access flags, credits and registrations split over 2 GiB,
 * over {@link LoopbackVerbsDouble} (a TEST DOUBLE of the verbs, which checks them as an HCA
 * does) and a real server.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RdmaTransportTest {
  /** The connections' checksum and handshake threads, this class's own. */
  private static final ConnectionThreads THREADS = new ConnectionThreads();

  @AfterAll
  static void closeConnectionThreads() {
    THREADS.close();
  }

  @TempDir static Path root;
  static final LoopbackVerbsDouble verbs = new LoopbackVerbsDouble();
  static BlockServer server;
  static byte[] data;

  @BeforeAll
  static void start() throws IOException {
    data = TestFiles.write(root.resolve("d.bin"), 4 << 20, 23);
    // Two credits per queue pair, so that a handful of reads already exhausts them.
    server = BlockServer.builder().root(root).port(0).rdma(RdmaMode.ON).verbs(() -> verbs)
        .rdmaSettings(new RdmaService.Settings(2, 64 << 10, 4, 16 << 10, Duration.ofSeconds(5)))
        .build().start();
  }

  @AfterAll
  static void stop() {
    server.close();
    assertEquals(0, verbs.liveRegions(), "every registration was closed");
  }

  private static RdmaConnection connect() {
    return new RdmaTransport(verbs, THREADS).connect(new InetSocketAddress("127.0.0.1", server.port()),
        new ConnectionOptions(null, Duration.ofSeconds(5), "gpudirect-client-rdma-test"));
  }

  @Test
  void moreReadsThanCreditsQueueAndAllCompleteInTheirBuffers() throws Exception {
    try (RdmaConnection c = connect()) {
      assertEquals(2, c.credits(), "the server grants what it keeps posted, not what was asked");
      int n = 40;
      int len = 100_000;
      List<ByteBuffer> buffers = new ArrayList<>();
      List<CompletableFuture<Void>> reads = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        // Heap and direct: a heap destination goes through a registered bounce buffer.
        ByteBuffer dst = i % 3 == 0 ? ByteBuffer.allocate(len) : ByteBuffer.allocateDirect(len);
        buffers.add(dst);
        reads.add(c.read(new ReadRequest(i + 1, "d.bin", (long) i * 50_000, len), dst));
      }
      // The double refuses a SEND with no receive posted: had the client sent more than its
      // credits, a read would have failed with RECEIVER_NOT_READY.
      for (int i = 0; i < n; i++) {
        reads.get(i).get(20, TimeUnit.SECONDS);
        byte[] got = new byte[len];
        buffers.get(i).flip().get(got);
        assertArrayEquals(Arrays.copyOfRange(data, i * 50_000, i * 50_000 + len), got, "read " + i);
      }
      assertTrue(c.isOpen());
    }
  }

  @Test
  void aBadRkeyFailsThatReadAndFlushesEveryOtherOutstandingOne() throws Exception {
    long errorsBefore = server.stats().errors();
    try (RdmaConnection c = connect()) {
      LoopbackVerbsDouble.VirtualMemory vm = verbs.virtualMemory(1 << 20);
      try (MemoryRegion region = c.register(vm.address(), 1 << 20, true)) {
        verbs.holdWrites();
        CompletableFuture<Void> bad = c.readInto(new ReadRequest(1, "d.bin", 0, 4096), vm.address(),
            ~region.rkey(), true);
        CompletableFuture<Void> good = c.read(new ReadRequest(2, "d.bin", 0, 4096), ByteBuffer.allocateDirect(4096));
        verbs.releaseWrites();
        for (CompletableFuture<Void> f : List.of(bad, good)) {
          ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
          Throwable cause = e.getCause();
          assertTrue(cause.getMessage().contains("gpudirect server 127.0.0.1:" + server.port()), cause.getMessage());
          // Which the client sees first is a race, on a NIC as in the double: the flush of a receive
          // it had posted (completion queue), or the server's disconnect (connection events) when
          // the server broke the queue pair while every receive was in use.
          if (cause instanceof RdmaConnectionException r) {
            assertEquals(RdmaException.Phase.COMPLETION, r.phase());
            assertTrue(r.getMessage().contains("flushed"), r.getMessage());
          } else {
            assertInstanceOf(ConnectionLostException.class, cause, String.valueOf(cause));
          }
        }
        assertFalse(c.isOpen());
      }
    } finally {
      verbs.releaseWrites();
    }
    assertTrue(waitFor(() -> server.stats().errors() > errorsBefore),
        "the server counted the refused WRITE as an error");
  }

  @Test
  void aWriteOutsideTheRegionIsRefusedByTheNicNotApplied() throws Exception {
    try (RdmaConnection c = connect()) {
      LoopbackVerbsDouble.VirtualMemory vm = verbs.virtualMemory(1 << 20);
      try (MemoryRegion region = c.register(vm.address(), 64 << 10, true)) {
        // The client's own check refuses a destination that does not fit its region.
        assertThrows(IllegalArgumentException.class, () -> c.readInto(
            new ReadRequest(1, "d.bin", 0, 8192), region, vm.address() + (60 << 10)));
        // Past that check (a client bug), the NIC refuses the WRITE; nothing lands.
        CompletableFuture<Void> f = c.readInto(new ReadRequest(2, "d.bin", 0, 8192),
            vm.address() + (60 << 10), region.rkey(), true);
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        assertInstanceOf(RdmaConnectionException.class, e.getCause());
        assertTrue(vm.writes().isEmpty(), "no byte was written outside the region: " + vm.writes().keySet());
      }
    }
  }

  @Test
  void aRegionWithoutRemoteWriteAccessCannotBeWritten() throws Exception {
    try (RdmaConnection c = connect()) {
      LoopbackVerbsDouble.VirtualMemory vm = verbs.virtualMemory(1 << 20);
      try (MemoryRegion region = c.register(vm.address(), 1 << 20, false)) {
        CompletableFuture<Void> f = c.readInto(new ReadRequest(1, "d.bin", 0, 4096), region, vm.address());
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        assertInstanceOf(RdmaConnectionException.class, e.getCause());
        assertTrue(vm.writes().isEmpty());
      }
    }
  }

  @Test
  void aFlushErrorFailsAllOutstandingReads() throws Exception {
    try (RdmaConnection c = connect()) {
      verbs.holdWrites();
      verbs.failNextWrite(WorkCompletion.Status.RETRY_EXCEEDED);
      List<CompletableFuture<Void>> reads = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        reads.add(c.read(new ReadRequest(i + 1, "d.bin", 0, 200_000), ByteBuffer.allocateDirect(200_000)));
      }
      verbs.releaseWrites();
      for (CompletableFuture<Void> f : reads) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        assertInstanceOf(RdmaConnectionException.class, e.getCause(), String.valueOf(e.getCause()));
      }
    } finally {
      verbs.releaseWrites();
    }
  }

  @Test
  void aServerWithoutRdmaIsAReasonNotAnError() throws Exception {
    try (BlockServer tcpOnly = BlockServer.builder().root(root).port(0).build().start()) {
      RdmaUnavailableException e = assertThrows(RdmaUnavailableException.class, () -> new RdmaTransport(verbs, THREADS)
          .connect(new InetSocketAddress("127.0.0.1", tcpOnly.port()),
              new ConnectionOptions(null, Duration.ofSeconds(5), "gpudirect-client-rdma-test")));
      assertTrue(e.reason().contains("does not serve RDMA"), e.getMessage());
      assertTrue(e.getMessage().contains("--rdma on"), e.getMessage());
    }
  }

  @Test
  void oneRegistrationCannotExceedTheIntLengthOfAnIbvMr() {
    try (RdmaConnection c = connect()) {
      LoopbackVerbsDouble.VirtualMemory vm = verbs.virtualMemory(3L << 30);
      RdmaConnectionException e = assertThrows(RdmaConnectionException.class, () -> c.register(vm.address(), 3L << 30, true));
      assertEquals(RdmaException.Phase.REGISTER, e.phase());
      try (RegisteredRange range = RegisteredRange.register(c, vm.address(), 3L << 30)) {
        assertEquals(2, range.regions().size());
        long total = range.regions().stream().mapToLong(MemoryRegion::length).sum();
        assertEquals(3L << 30, total);
        // Pieces never straddle the boundary between the two regions.
        long boundary = range.regions().get(0).address() + range.regions().get(0).length();
        for (long[] p : range.pieces(vm.address(), 3L << 30, 64 << 20)) {
          assertTrue(p[0] + p[1] <= boundary || p[0] >= boundary, Arrays.toString(p));
        }
      }
    }
  }

  @Test
  void registrationsAreClosedWithTheirReads() throws Exception {
    int before = verbs.liveRegions();
    try (RdmaConnection c = connect()) {
      for (int i = 0; i < 5; i++) {
        c.read(new ReadRequest(i + 1, "d.bin", 0, 10_000), ByteBuffer.allocateDirect(10_000)).get(10, TimeUnit.SECONDS);
      }
      assertTrue(waitFor(() -> verbs.liveRegions() <= before + 4),
          "only the connection's own regions stay (client and server control slots, server chunks): "
              + verbs.liveRegions() + " live, " + before + " before");
    }
    assertTrue(waitFor(() -> verbs.liveRegions() == before), "all gone after close: " + verbs.liveRegions());
  }

  @Test
  void everyRegistrationAskedForRemoteWriteAlsoHasLocalWrite() {
    try (RdmaConnection c = connect()) {
      LoopbackVerbsDouble.VirtualMemory vm = verbs.virtualMemory(4096);
      // The double refuses REMOTE_WRITE without LOCAL_WRITE, as ibv_reg_mr does (EINVAL).
      c.register(vm.address(), 4096, true).close();
      assertTrue(DisniVerbs.accessFlags(EnumSet.of(Access.REMOTE_WRITE)) != 0);
    }
  }

  @Test
  void aDrainingServerLetsAnRdmaReadInFlightFinish() throws Exception {
    LoopbackVerbsDouble own = new LoopbackVerbsDouble();
    BlockServer draining = BlockServer.builder().root(root).port(0).rdma(RdmaMode.ON).verbs(() -> own)
        .shutdownGracePeriod(Duration.ofSeconds(5)).build().start();
    Thread closer = new Thread(draining::close);
    try (RdmaConnection c = new RdmaTransport(own, THREADS).connect(new InetSocketAddress("127.0.0.1", draining.port()),
        new ConnectionOptions(null, Duration.ofSeconds(5), "gpudirect-client-rdma-test"))) {
      own.holdWrites();
      ByteBuffer dst = ByteBuffer.allocateDirect(1 << 20);
      CompletableFuture<Void> read = c.read(new ReadRequest(1, "d.bin", 0, 1 << 20), dst);
      assertTrue(waitFor(() -> draining.stats().readsInFlight() == 1));
      closer.start();
      // Longer than the drain's idle limit (250 ms): only the read in flight keeps it open.
      Thread.sleep(600);
      own.releaseWrites();
      read.get(10, TimeUnit.SECONDS);
      byte[] got = new byte[1 << 20];
      dst.flip().get(got);
      assertArrayEquals(Arrays.copyOf(data, 1 << 20), got);
    } finally {
      own.releaseWrites();
      closer.join(10_000);
    }
  }

  static boolean waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
    return Settle.until(condition);
  }
}
