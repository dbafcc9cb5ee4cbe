package io.gpudirect.shuffle;

import static io.gpudirect.shuffle.ShuffleFetches.settlesAt;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.ClientConfig;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.protocol.ReadData;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.protocol.ShuffleRead;
import io.gpudirect.server.BlockServer;
import io.gpudirect.shuffle.ShuffleFetchException.Reason;
import io.gpudirect.testing.FileChanges;
import io.gpudirect.testing.LoopbackCutter;
import io.gpudirect.testing.RawPeer;
import io.gpudirect.testing.ServerProcess;
import io.gpudirect.testing.SparkShuffleLayout;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reducer's fetches when things go wrong: a server killed in the middle, bytes flipped on the
 * way, a map output's files changed while they are served; and the in-flight limits, seen from
 * the servers as the requests they received.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShuffleFaultsTest {
  @TempDir static Path tmp;
  static SparkShuffleLayout layout;
  static ShuffleFetches reducer;
  /** Shuffle 1: 40 map outputs of 3 partitions, partition r of map m {@link #bytes}(m, r). */
  static final int MAPS = 40;

  @BeforeAll
  static void write() throws IOException {
    layout = new SparkShuffleLayout(List.of(tmp.resolve("d1/blockmgr-x"), tmp.resolve("d2/blockmgr-y")), 64);
    for (Path d : layout.localDirs()) {
      Files.createDirectories(d);
    }
    for (int m = 0; m < MAPS; m++) {
      layout.write(1, m, bytes(m, 0), bytes(m, 1), bytes(m, 2));
    }
    reducer = new ShuffleFetches("shuffle-faults-test", ClientConfig.builder().streams(1).maxRetries(2)
        .retryBackoff(Duration.ofMillis(20)).connectTimeout(Duration.ofSeconds(2))
        .requestTimeout(Duration.ofSeconds(10)).build());
  }

  @AfterAll
  static void stop() {
    reducer.close();
  }

  static byte[] bytes(long map, int reduce) {
    byte[] b = new byte[20_000 + (int) (map * 1000) + reduce];
    new Random(map * 31 + reduce).nextBytes(b);
    return b;
  }

  static List<BlockToFetch> partition1OfEveryMap() {
    List<BlockToFetch> out = new ArrayList<>();
    for (int m = 0; m < MAPS; m++) {
      out.add(new BlockToFetch(ShuffleBlockId.of(1, m, 1), bytes(m, 1).length));
    }
    return out;
  }

  static BlockServer serve() {
    return BlockServer.builder().shuffleDirectories(layout.localDirs(), 64).port(0).build().start();
  }

  @Test
  void aServerKilledInTheMiddleFailsTheBlocksNotYetInAsServerLost() throws Exception {
    List<String> args = new ArrayList<>(List.of("--shuffle"));
    layout.localDirs().forEach(d -> args.add(d.toString()));
    try (ServerProcess.Running server = ServerProcess.start(ShuffleFaultsTest.class, args.toArray(new String[0]))) {
      Map<InetSocketAddress, List<BlockToFetch>> byServer =
          Map.of(new InetSocketAddress("127.0.0.1", server.port()), partition1OfEveryMap());
      int good = 0;
      int lost = 0;
      long start = System.nanoTime();
      try (ShuffleBlockFetcher fetcher = ShuffleBlockFetcher.start(byServer, new FetchLimits(1 << 20, 4, 2),
          reducer.clients, reducer.allocator)) {
        for (int taken = 0; fetcher.hasNext(); taken++) {
          if (taken == 5) {
            server.kill();
          }
          try (FetchedBlock b = fetcher.next()) {
            assertArrayEquals(bytes(b.id().mapId(), 1), ShuffleFetches.readAll(b), b.id().name());
            good++;
          } catch (ShuffleFetchException e) {
            assertEquals(Reason.SERVER_LOST, e.reason(), e.getMessage());
            assertTrue(e.getMessage().contains(e.block().name()) && e.getMessage().contains(e.block().describe())
                && e.getMessage().contains(":" + server.port()), e.getMessage());
            lost++;
          }
        }
      }
      assertEquals(MAPS, good + lost);
      assertTrue(good >= 5 && lost >= MAPS - 5 - 4, good + " good, " + lost + " lost");
      assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(60), "no block waits for long");
    }
    assertEquals(0, reducer.allocator.outstandingBytes(), "every buffer given back");
  }

  /**
   * Its first block's connect fails (a port where something accepts and hangs up at once: no
   * gpudirect server); the blocks not yet asked for fail with it at once, rather than each
   * trying to connect again (seen: 24 connects for 25 blocks before the fetcher did so).
   */
  @Test
  void aServerThatCannotBeReachedIsTriedOnceForAllItsBlocks() throws Exception {
    try (ServerSocket door = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      AtomicInteger knocks = new AtomicInteger();
      Thread hangUp = new Thread(() -> {
        try {
          while (true) {
            door.accept().close();
            knocks.incrementAndGet();
          }
        } catch (IOException closed) {
          // the test is over
        }
      }, "test-hang-up");
      hangUp.setDaemon(true);
      hangUp.start();
      Map<ShuffleBlockId, ShuffleFetches.Outcome> got = reducer.fetch(door.getLocalPort(),
          new FetchLimits(1 << 20, 100, 2), partition1OfEveryMap().subList(0, 25));
      assertEquals(25, got.size());
      for (ShuffleFetches.Outcome o : got.values()) {
        ShuffleFetchException e = o.fetchFailure();
        assertEquals(Reason.SERVER_LOST, e.reason(), e.getMessage());
        assertTrue(e.getMessage().contains(e.block().name()), e.getMessage());
      }
      assertTrue(knocks.get() >= 1 && knocks.get() <= 3, knocks.get()
          + " connections: one connect, tried at most 1 + maxRetries times");
    }
  }

  @Test
  void aByteFlippedOnTheWayIsCaughtAndFetchedAgain() throws IOException {
    try (BlockServer server = serve();
        LoopbackCutter flip = new LoopbackCutter(server.port(), 5_000, 1).corruptInsteadOfClose(Long.MAX_VALUE)) {
      ShuffleBlockId id = ShuffleBlockId.of(1, 3, 2);
      assertArrayEquals(bytes(3, 2), reducer.fetchOne(flip.port(), id).orThrow());
      assertEquals(1, flip.faultsInjected(), "a byte was flipped");
      assertEquals(2, flip.connections(), "and the block fetched again on a new connection");
    }
  }

  @Test
  void bytesCorruptOnEveryTryFailTheBlockAsCorruptInTransit() throws IOException {
    try (BlockServer server = serve();
        LoopbackCutter flip = new LoopbackCutter(server.port(), 5_000, 100).corruptInsteadOfClose(Long.MAX_VALUE)) {
      ShuffleBlockId id = ShuffleBlockId.of(1, 4, 0);
      ShuffleFetchException e = reducer.fetchOne(flip.port(), id).fetchFailure();
      assertEquals(Reason.CORRUPT_IN_TRANSIT, e.reason(), e.getMessage());
      assertEquals(id, e.block());
      assertTrue(e.getMessage().contains("CRC32C") && e.getMessage().contains("shuffle_1_4_0"), e.getMessage());
      assertEquals(3, flip.faultsInjected(), "every one of the 3 tries");
    }
  }

  /** The server's check after sendfile: a data file written while its bytes go out voids them. */
  @Test
  void aDataFileRewrittenWhileItIsSentVoidsThePayloadNamingTheBlock() throws IOException {
    byte[] big = new byte[Protocol.DEFAULT_MAX_READ_LENGTH];
    new Random(1).nextBytes(big);
    layout.write(2, 1, new byte[7], big);
    try (BlockServer server = serve(); RawPeer peer = new RawPeer(server.port(), 64 * 1024)) {
      peer.handshake();
      peer.send(new ShuffleRead(1, ShuffleBlockId.of(2, 1, 1), 0, big.length, FileVersion.ANY));
      ShuffleData header = assertInstanceOf(ShuffleData.class, peer.receive());
      assertEquals(big.length, header.blockLength());
      assertEquals(big.length, header.length());
      FileChanges.OVERWRITTEN.apply(layout.data(2, 1), 9);
      peer.payload(big.length);
      assertEquals(ReadData.PAYLOAD_VOID, peer.trailerStatus());
      ErrorResponse refused = assertInstanceOf(ErrorResponse.class, peer.receive());
      assertEquals(ErrorCode.FILE_CHANGED, refused.code(), refused.message());
      assertTrue(refused.message().contains("shuffle_2_1_1 (shuffle 2, map 1, reduce 1)")
          && refused.message().contains("while it was being read"), refused.message());
    }
  }

  /** A window after the first names the data file's version; a map output written again meanwhile is refused. */
  @Test
  void aMapOutputWrittenAgainBetweenWindowsFailsTheBlockAsChanged() throws Exception {
    byte[] p = new byte[300_000];
    new Random(2).nextBytes(p);
    layout.write(2, 2, p);
    try (BlockServer server = BlockServer.builder().shuffleDirectories(layout.localDirs(), 64)
        .maxReadLength(Protocol.MIN_MAX_READ_LENGTH).port(0).build().start()) {
      try (RawPeer peer = new RawPeer(server.port())) {
        peer.handshake();
        ShuffleBlockId id = ShuffleBlockId.of(2, 2, 0);
        peer.send(new ShuffleRead(1, id, 0, Protocol.MIN_MAX_READ_LENGTH, FileVersion.ANY));
        ShuffleData first = assertInstanceOf(ShuffleData.class, peer.receive());
        peer.payload(first.length());
        assertEquals(ReadData.PAYLOAD_GOOD, peer.trailerStatus());
        FileChanges.awaitChangeTimeAfter(layout.data(2, 2));
        layout.write(2, 2, p);
        peer.send(new ShuffleRead(2, id, Protocol.MIN_MAX_READ_LENGTH, Protocol.MIN_MAX_READ_LENGTH, first.version()));
        ErrorResponse refused = assertInstanceOf(ErrorResponse.class, peer.receive());
        assertEquals(ErrorCode.FILE_CHANGED, refused.code(), refused.message());
        assertTrue(refused.message().contains("shuffle_2_2_0") && refused.message().contains(first.version().describe()),
            refused.message());
      }

      // Through the fetcher: held after the first window, the files written again, then let go. A
      // client whose chunk is the window keeps two windows outstanding, so that the later ones are
      // asked for after the files changed (with 4 MiB chunks all four go at once, are answered from
      // the first version before the hold, and the block arrives whole and unchanged: also right).
      try (ShuffleFetches windowed = new ShuffleFetches("shuffle-faults-windowed", ClientConfig.builder().streams(1)
              .chunkSize(Protocol.MIN_MAX_READ_LENGTH).maxRetries(2).retryBackoff(Duration.ofMillis(20))
              .connectTimeout(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(10)).build());
          LoopbackCutter hold = new LoopbackCutter(server.port(), Protocol.MIN_MAX_READ_LENGTH + 1000, 1)
          .holdUntilReleased()) {
        Thread release = new Thread(() -> {
          try {
            while (hold.faultsInjected() == 0) {
              Thread.sleep(5);
            }
            FileChanges.awaitChangeTimeAfter(layout.data(2, 2));
            layout.write(2, 2, p);
          } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
          } finally {
            hold.release();
          }
        });
        release.start();
        ShuffleFetchException e = windowed.fetchOne(hold.port(), ShuffleBlockId.of(2, 2, 0)).fetchFailure();
        release.join();
        assertEquals(Reason.MAP_OUTPUT_CHANGED, e.reason(), e.getMessage());
        assertEquals(0, windowed.allocator.outstandingBytes(), "the windows that came are given back");
      }
    }
    assertEquals(0, reducer.allocator.outstandingBytes(), "the windows that came are given back");
  }

  /** Truncated while the reducer is held in the middle of it: never taken as good bytes. */
  @Test
  void aDataFileTruncatedWhileFetchedIsNeverTakenAsGood() throws Exception {
    byte[] p = new byte[8 << 20];
    new Random(4).nextBytes(p);
    layout.write(2, 3, p);
    try (BlockServer server = serve();
        LoopbackCutter hold = new LoopbackCutter(server.port(), 1 << 20, 1).holdUntilReleased()) {
      Thread truncate = new Thread(() -> {
        try {
          while (hold.faultsInjected() == 0) {
            Thread.sleep(5);
          }
          FileChanges.TRUNCATED.apply(layout.data(2, 3), 0);
        } catch (IOException | InterruptedException e) {
          throw new IllegalStateException(e);
        } finally {
          hold.release();
        }
      });
      truncate.start();
      ShuffleFetchException e = reducer.fetchOne(hold.port(), ShuffleBlockId.of(2, 3, 0)).fetchFailure();
      truncate.join();
      assertTrue(e.reason() == Reason.MAP_OUTPUT_CHANGED || e.reason() == Reason.MAP_OUTPUT_CORRUPT, e.getMessage());
      assertTrue(e.getMessage().contains("shuffle_2_3_0"), e.getMessage());
    }
  }

  /** Seen from the server: the requests it got while the reducer took nothing. */
  @Test
  void theFetcherKeepsWithinSparksLimits() throws Exception {
    try (BlockServer a = serve(); BlockServer b = serve()) {
      InetSocketAddress toA = new InetSocketAddress("127.0.0.1", a.port());
      InetSocketAddress toB = new InetSocketAddress("127.0.0.1", b.port());
      List<BlockToFetch> blocks = partition1OfEveryMap().subList(0, 10);

      // Blocks per server: 3 out, the rest wait until the reducer takes one.
      try (ShuffleBlockFetcher f = ShuffleBlockFetcher.start(Map.of(toA, blocks), new FetchLimits(1L << 30, 100, 3),
          reducer.clients, reducer.allocator)) {
        settlesAt(3, () -> a.stats().requests());
        f.next().close();
        settlesAt(4, () -> a.stats().requests());
      }

      // Bytes: two blocks of 10 in 25; one larger than it all goes only alone.
      List<BlockToFetch> sized = new ArrayList<>();
      long[] sizes = {10, 10, 100, 10};
      for (int i = 0; i < sizes.length; i++) {
        sized.add(new BlockToFetch(blocks.get(i).id(), sizes[i]));
      }
      long before = b.stats().requests();
      try (ShuffleBlockFetcher f = ShuffleBlockFetcher.start(Map.of(toB, sized), new FetchLimits(25, 100, 100),
          reducer.clients, reducer.allocator)) {
        settlesAt(before + 2, () -> b.stats().requests());
        f.next().close();
        settlesAt(before + 2, () -> b.stats().requests());
        f.next().close();
        settlesAt(before + 3, () -> b.stats().requests());
        f.next().close();
        settlesAt(before + 4, () -> b.stats().requests());
      }

      // Requests over every server: 3 in all, in turn.
      long beforeA = a.stats().requests();
      long beforeB = b.stats().requests();
      Map<InetSocketAddress, List<BlockToFetch>> both = new HashMap<>();
      both.put(toA, blocks);
      both.put(toB, blocks);
      try (ShuffleBlockFetcher f = ShuffleBlockFetcher.start(both, new FetchLimits(1L << 30, 3, 100),
          reducer.clients, reducer.allocator)) {
        settlesAt(3, () -> a.stats().requests() - beforeA + b.stats().requests() - beforeB);
        assertTrue(a.stats().requests() > beforeA && b.stats().requests() > beforeB, "each server in turn");
        int taken = 0;
        while (f.hasNext()) {
          f.next().close();
          taken++;
        }
        assertEquals(20, taken);
      }
    }
    assertEquals(0, reducer.allocator.outstandingBytes(), "results not taken are given back at close");
  }
}
