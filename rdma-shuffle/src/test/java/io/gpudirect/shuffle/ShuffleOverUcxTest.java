package io.gpudirect.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.client.ClientConfig;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.shuffle.ShuffleFetchException.Reason;
import io.gpudirect.testing.ServerProcess;
import io.gpudirect.testing.SparkShuffleLayout;
import io.gpudirect.verbs.provider.RdmaProvider;
import io.gpudirect.verbs.ucx.UcxLibrary;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shuffle blocks over the RDMA queue pair, through real UCX (libucp from the OS, jucx; over TCP
 * or shared memory here, as verbs on an RDMA NIC): one server of hand-written map outputs, one
 * reducer over UCX and one over TCP, and every answer over UCX the TCP one, bytes and refusals
 * alike. Skips, saying why, where libucp is missing.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShuffleOverUcxTest {
  static final byte[] SECRET = ShuffleServingTest.SECRET;
  /** The server's largest answer, and the UCX reducer's chunk: longer blocks take windows. */
  static final int WINDOW = ShuffleServingTest.WINDOW;

  @TempDir static Path tmp;
  static SparkShuffleLayout layout;
  static BlockServer server;
  static ShuffleFetches overUcx;
  static ShuffleFetches overTcp;
  static byte[][] map7;

  static ClientConfig.Builder config() {
    return ClientConfig.builder().secret(SECRET).streams(2).maxRetries(2).retryBackoff(Duration.ofMillis(20))
        .connectTimeout(Duration.ofSeconds(5)).requestTimeout(Duration.ofSeconds(10));
  }

  static ClientConfig ucx() {
    return config().transport("rdma").rdmaProvider(RdmaProvider.UCX).build();
  }

  @BeforeAll
  static void start() throws IOException {
    String missing = UcxLibrary.unavailableReason();
    assumeTrue(missing == null, "UCX is not installed here (apt-get install libucx0): " + missing);
    layout = new SparkShuffleLayout(List.of(tmp.resolve("disk1/blockmgr-a"), tmp.resolve("disk2/blockmgr-b")), 64);
    for (Path d : layout.localDirs()) {
      Files.createDirectories(d);
    }
    Random random = new Random(13);
    map7 = new byte[12][];
    for (int i = 0; i < map7.length; i++) {
      map7[i] = new byte[i % 4 == 1 ? 0 : random.nextInt(3000)];
      random.nextBytes(map7[i]);
    }
    layout.write(1, 7, map7);
    byte[] big = new byte[3 * WINDOW + 1234];
    random.nextBytes(big);
    layout.write(2, 1, new byte[100], big, new byte[10]);
    layout.write(1, 8, new byte[0], new byte[0], new byte[0]);
    layout.write(3, 1, new byte[10], new byte[20], new byte[30]);
    layout.writeIndex(3, 1, 0, 30, 10, 60);
    server = BlockServer.builder().shuffleDirectories(layout.localDirs(), 64).secret(SECRET)
        .maxReadLength(WINDOW).rdma(RdmaMode.ON).rdmaProvider(RdmaProvider.UCX).port(0).build().start();
    overUcx = new ShuffleFetches("shuffle-over-ucx", ucx());
    overTcp = new ShuffleFetches("shuffle-over-tcp", config().transport("tcp").build());
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      overUcx.close();
      overTcp.close();
      server.close();
    }
  }

  @Test
  void everyBlockAndRangeOverUcxIsWhatTcpGives() {
    List<ShuffleBlockId> ids = new ArrayList<>();
    for (int start = 0; start < map7.length; start++) {
      for (int end = start + 1; end <= map7.length; end++) {
        ids.add(new ShuffleBlockId(1, 7, start, end));
      }
    }
    ids.add(ShuffleBlockId.of(2, 1, 1));
    ids.add(ShuffleBlockId.of(1, 8, 2));
    ids.add(new ShuffleBlockId(1, 8, 0, 3));
    overUcx.clients.client(address()).join(); // connected: its RDMA_SETUPs are not counted below
    long requests = server.stats().requests();
    Map<ShuffleBlockId, ShuffleFetches.Outcome> ucx = overUcx.fetch(server.port(), new FetchLimits(64 << 10, 8, 4),
        ShuffleFetches.blocks(ids));
    long ucxRequests = server.stats().requests() - requests;
    Map<ShuffleBlockId, ShuffleFetches.Outcome> tcp = overTcp.fetch(server.port(), new FetchLimits(64 << 10, 8, 4),
        ShuffleFetches.blocks(ids));
    assertOverUcx(overUcx, address());
    assertEquals(ids.size(), ucx.size());
    for (ShuffleBlockId id : ids) {
      assertArrayEquals(tcp.get(id).orThrow(), ucx.get(id).orThrow(), id.name());
    }
    assertArrayEquals(ShuffleServingTest.concat(map7, 3, 9), ucx.get(new ShuffleBlockId(1, 7, 3, 9)).orThrow());
    // The long block took its 4 windows, every other block one: one request each, as over TCP.
    assertEquals(ids.size() + 3, ucxRequests, "requests the server counted for the fetches over UCX");
    assertEquals(0, overUcx.allocator.outstandingBytes(), "every window's memory given back");
  }

  /**
   * A server answering with Spark's partition checksums: over UCX too every block and range comes
   * through checked against them (partitions crossing the 64 KiB windows' edges included), and a
   * byte flipped on the disk fails the fetch naming the partition and the checksum.
   */
  @Test
  void overUcxBlocksAreCheckedAgainstSparksChecksums() throws IOException {
    byte[][] map = ShuffleChecksumsTest.partitions(4);
    layout.writeWithChecksums(4, 1, "CRC32", java.util.zip.CRC32::new, map);
    layout.writeWithChecksums(4, 2, "CRC32", java.util.zip.CRC32::new, map);
    ShuffleChecksumsTest.flip(layout.data(4, 2), map[0].length + 90_000);
    try (BlockServer checked = BlockServer.builder().shuffleDirectories(layout.localDirs(), 64)
        .shuffleChecksums(io.gpudirect.protocol.ChecksumAlgorithm.CRC32).secret(SECRET).maxReadLength(WINDOW)
        .rdma(RdmaMode.ON).rdmaProvider(RdmaProvider.UCX).port(0).build().start()) {
      List<ShuffleBlockId> ids = new ArrayList<>();
      for (int start = 0; start < map.length; start++) {
        ids.add(new ShuffleBlockId(4, 1, start, map.length));
        ids.add(ShuffleBlockId.of(4, 1, start));
      }
      Map<ShuffleBlockId, ShuffleFetches.Outcome> ucx = overUcx.fetch(checked.port(), FetchLimits.SPARK_DEFAULTS,
          ShuffleFetches.blocks(ids));
      assertOverUcx(overUcx, new InetSocketAddress("127.0.0.1", checked.port()));
      for (ShuffleBlockId id : ids) {
        assertArrayEquals(ShuffleServingTest.concat(map, id.startReduceId(), id.endReduceId()), ucx.get(id).orThrow(),
            id.name());
      }
      // As many partitions as an answer lists: RDMA_SHUFFLE_DONE still fits the queue pair's slot.
      int max = io.gpudirect.protocol.PartitionChecksums.MAX_PARTITIONS;
      byte[][] wide = new byte[max][];
      for (int i = 0; i < max; i++) {
        wide[i] = new byte[] {(byte) i, (byte) (i >> 8), 7};
      }
      layout.writeWithChecksums(4, 3, "CRC32", java.util.zip.CRC32::new, wide);
      assertArrayEquals(ShuffleServingTest.concat(wide, 0, max),
          overUcx.fetchOne(checked.port(), new ShuffleBlockId(4, 3, 0, max)).orThrow());

      ShuffleFetchException e = overUcx.fetchOne(checked.port(), new ShuffleBlockId(4, 2, 0, 4)).fetchFailure();
      assertEquals(Reason.MAP_OUTPUT_CORRUPT, e.reason(), e.getMessage());
      assertTrue(e.getMessage().contains("CRC32 checksum of shuffle 4, map 2, reduce 2 (100000 bytes"),
          e.getMessage());
      assertEquals(0, overUcx.allocator.outstandingBytes(), "every window's memory given back");
    }
  }

  /** Over the limit: fetched to disk over UCX, each window written to the file once in; TCP's answer, byte for byte. */
  @Test
  void aBlockFetchedToDiskOverUcxIsWhatTcpGives() {
    ShuffleBlockId id = ShuffleBlockId.of(2, 1, 1);
    List<Path> made = new java.util.concurrent.CopyOnWriteArrayList<>();
    FetchToDisk toDisk = new FetchToDisk(WINDOW, () -> {
      Path f = tmp.resolve("fetched-" + made.size());
      made.add(f);
      return f;
    });
    ShuffleFetches.Outcome ucx = overUcx.fetch(server.port(), FetchLimits.SPARK_DEFAULTS, toDisk,
        List.of(new BlockToFetch(id, 3L * WINDOW + 1234))).get(id);
    assertTrue(ucx.onDisk());
    assertArrayEquals(overTcp.fetchOne(server.port(), id).orThrow(), ucx.orThrow());
    assertEquals(1, made.size());
    assertFalse(Files.exists(made.get(0)), "its file deleted once the block was closed");
    assertEquals(0, overUcx.allocator.outstandingBytes());
  }

  @Test
  void refusalsOverUcxAreTcpsNamingTheBlock() {
    Object[][] refused = {
        {ShuffleBlockId.of(1, 99, 3), Reason.BLOCK_UNAVAILABLE, ErrorCode.NOT_FOUND, "shuffle_1_99_0.index"},
        {new ShuffleBlockId(1, 7, 10, 13), Reason.BLOCK_UNAVAILABLE, ErrorCode.OUT_OF_RANGE, "12 reduce partitions"},
        {ShuffleBlockId.of(3, 1, 0), Reason.MAP_OUTPUT_CORRUPT, ErrorCode.CORRUPT_MAP_OUTPUT,
            "the offset of partition 2 is 10, before the one of partition 1 (30)"}};
    for (Object[] r : refused) {
      ShuffleBlockId id = (ShuffleBlockId) r[0];
      ShuffleFetchException ucx = overUcx.fetchOne(server.port(), id).fetchFailure();
      ShuffleFetchException tcp = overTcp.fetchOne(server.port(), id).fetchFailure();
      assertEquals(r[1], ucx.reason(), ucx.getMessage());
      assertEquals(r[2], ShuffleServingTest.code(ucx), ucx.getMessage());
      assertEquals(id, ucx.block());
      assertTrue(ucx.getMessage().contains(id.name()) && ucx.getMessage().contains(id.describe())
          && ucx.getMessage().contains((String) r[3]), ucx.getMessage());
      assertEquals(tcp.getMessage(), ucx.getMessage(), "the same refusal over both");
    }
    assertOverUcx(overUcx, address());
  }

  /** The server process dies with SIGKILL mid-fetch: the blocks not in fail as SERVER_LOST, none hangs. */
  @Test
  void aServerKilledInTheMiddleOverUcxFailsTheBlocksNotYetInAsServerLost() throws Exception {
    SparkShuffleLayout many = new SparkShuffleLayout(List.of(tmp.resolve("k1/blockmgr-x"), tmp.resolve("k2/blockmgr-y")), 64);
    List<BlockToFetch> blocks = new ArrayList<>();
    for (int m = 0; m < 40; m++) {
      many.write(1, m, ShuffleFaultsTest.bytes(m, 0), ShuffleFaultsTest.bytes(m, 1));
      blocks.add(new BlockToFetch(ShuffleBlockId.of(1, m, 1), ShuffleFaultsTest.bytes(m, 1).length));
    }
    List<String> args = new ArrayList<>(List.of("--rdma-ucx", "--shuffle"));
    many.localDirs().forEach(d -> args.add(d.toString()));
    try (ShuffleFetches reducer = new ShuffleFetches("shuffle-over-ucx-killed",
            ClientConfig.builder().streams(1).maxRetries(2).retryBackoff(Duration.ofMillis(20))
                .connectTimeout(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(10))
                .transport("rdma").rdmaProvider(RdmaProvider.UCX).build());
        ServerProcess.Running killed = ServerProcess.start(ShuffleOverUcxTest.class, args.toArray(new String[0]))) {
      InetSocketAddress at = new InetSocketAddress("127.0.0.1", killed.port());
      int good = 0;
      int lost = 0;
      long start = System.nanoTime();
      try (ShuffleBlockFetcher fetcher = ShuffleBlockFetcher.start(Map.of(at, blocks), new FetchLimits(1 << 20, 4, 2),
          reducer.clients, reducer.allocator)) {
        for (int taken = 0; fetcher.hasNext(); taken++) {
          if (taken == 5) {
            assertOverUcx(reducer, at);
            killed.kill();
          }
          try (FetchedBlock b = fetcher.next()) {
            assertArrayEquals(ShuffleFaultsTest.bytes(b.id().mapId(), 1), ShuffleFetches.readAll(b), b.id().name());
            good++;
          } catch (ShuffleFetchException e) {
            assertEquals(Reason.SERVER_LOST, e.reason(), e.getMessage());
            assertTrue(e.getMessage().contains(e.block().name()) && e.getMessage().contains(":" + killed.port()),
                e.getMessage());
            lost++;
          }
        }
      }
      assertEquals(40, good + lost);
      assertTrue(good >= 5 && lost >= 40 - 5 - 4, good + " good, " + lost + " lost");
      assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(60), "no block waits for long");
      assertEquals(0, reducer.allocator.outstandingBytes(), "every buffer given back");
    }
  }

  /** The reducer's client of {@code server} connected over UCX ("ucx:tcp" here, "ucx:rc" on a NIC...). */
  static void assertOverUcx(ShuffleFetches reducer, InetSocketAddress server) {
    String transport = reducer.clients.client(server).join().transport();
    assertTrue(transport.startsWith("ucx"), "the blocks went over " + transport + ", not UCX");
  }

  private static InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", server.port());
  }
}
