package io.gpudirect.shuffle;

import static io.gpudirect.shuffle.ShuffleFetches.settlesAt;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.server.BlockServer;
import io.gpudirect.shuffle.ShuffleFetchException.Reason;
import io.gpudirect.shuffle.server.ExecutorShuffleServer;
import io.gpudirect.testing.LoopbackCutter;
import io.gpudirect.testing.SparkShuffleLayout;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
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
 * Blocks over {@link FetchToDisk}'s limit fetched from an executor's shuffle server (a real
 * {@link ExecutorShuffleServer} over map outputs written in Spark's layout) to files, as
 * Spark's fetcher sends them: the bytes through the file, windows checked before they reach it
 * (a byte flipped on the way is fetched again; on every try, the block fails and its file goes),
 * a block longer than the reducer's memory fetched window by window, every file deleted when its
 * block is closed, its fetch fails or the fetcher closes first, and such blocks counted in flight
 * until taken, as Spark counts them.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShuffleFetchToDiskTest {
  static final int MAPS = 6;
  static final int CHUNK = 1 << 20;
  static final long MAX_IN_MEMORY = 64 << 10;

  static final byte[] SECRET = ShuffleServingTest.SECRET;

  @TempDir static Path tmp;
  static SparkShuffleLayout layout;
  static ExecutorShuffleServer server;
  static ShuffleFetches reducer;

  static ClientConfig.Builder config() {
    return ClientConfig.builder().secret(SECRET).chunkSize(CHUNK).maxRetries(2).retryBackoff(Duration.ofMillis(20))
        .connectTimeout(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(10));
  }

  @BeforeAll
  static void serve() throws IOException {
    layout = new SparkShuffleLayout(List.of(tmp.resolve("d1/blockmgr-x"), tmp.resolve("d2/blockmgr-y")), 64);
    for (int m = 0; m < MAPS; m++) {
      layout.write(1, m, bytes(m, 0), bytes(m, 1), bytes(m, 2));
    }
    server = ExecutorShuffleServer.start(layout.localDirs(), 64, "127.0.0.1", SECRET,
        ExecutorShuffleServer.Transport.TCP);
    // Windows of 1 MiB over two streams: a 3 MiB block is four windows.
    reducer = new ShuffleFetches("fetch-to-disk-test", config().streams(2).build());
  }

  @AfterAll
  static void stop() {
    reducer.close();
    server.close();
  }

  /** Partition 0 some 20 KB (into memory), 1 some 300 KB (one window, to disk), 2 just over 3 MiB (four windows). */
  static byte[] bytes(long map, int reduce) {
    int[] sizes = {20_000, 300_000, (3 << 20) + 17};
    byte[] b = new byte[sizes[reduce] + (int) map * 1000];
    new Random(map * 31 + reduce).nextBytes(b);
    return b;
  }

  static BlockToFetch block(int map, int reduce) {
    return new BlockToFetch(ShuffleBlockId.of(1, map, reduce), bytes(map, reduce).length);
  }

  static List<BlockToFetch> everyBlock() {
    List<BlockToFetch> out = new ArrayList<>();
    for (int m = 0; m < MAPS; m++) {
      for (int r = 0; r < 3; r++) {
        out.add(block(m, r));
      }
    }
    return out;
  }

  /** Over {@link #MAX_IN_MEMORY} to files under {@code dir}, each path kept in {@code made} as it is handed out. */
  static FetchToDisk toDisk(Path dir, List<Path> made) throws IOException {
    return toDisk(MAX_IN_MEMORY, dir, made);
  }

  static FetchToDisk toDisk(long maxInMemory, Path dir, List<Path> made) throws IOException {
    Files.createDirectories(dir);
    AtomicInteger n = new AtomicInteger();
    return new FetchToDisk(maxInMemory, () -> {
      Path f = dir.resolve("fetch-" + n.incrementAndGet());
      made.add(f);
      return f;
    });
  }

  static Map<InetSocketAddress, List<BlockToFetch>> from(int port, List<BlockToFetch> blocks) {
    return Map.of(new InetSocketAddress("127.0.0.1", port), blocks);
  }

  /**
   * Those of {@code files} still on disk. The list is a synchronized one that the client's threads
   * add to while blocks still arrive: it is copied under its lock (a stream over it is not).
   */
  static List<Path> existing(List<Path> files) {
    List<Path> now;
    synchronized (files) {
      now = List.copyOf(files);
    }
    return now.stream().filter(Files::exists).toList();
  }

  @Test
  void blocksOverTheLimitComeThroughFilesThatClosingDeletes() throws Exception {
    List<Path> made = Collections.synchronizedList(new ArrayList<>());
    List<FetchedBlock> taken = new ArrayList<>();
    try (ShuffleBlockFetcher fetcher = ShuffleBlockFetcher.start(from(server.port(), everyBlock()),
        FetchLimits.SPARK_DEFAULTS, toDisk(tmp.resolve("all"), made), reducer.clients, reducer.allocator)) {
      while (fetcher.hasNext()) {
        taken.add(fetcher.next());
      }
    }
    assertEquals(MAPS * 3, taken.size());
    List<byte[]> onDisk = new ArrayList<>();
    for (FetchedBlock b : taken) {
      byte[] expected = bytes(b.id().mapId(), b.id().startReduceId());
      assertEquals(expected.length > MAX_IN_MEMORY, b.onDisk(), b.toString());
      assertArrayEquals(expected, ShuffleFetches.readAll(b), b.toString());
      assertArrayEquals(expected, ShuffleFetches.readAll(b), "read again from its start: " + b);
      if (b.onDisk()) {
        onDisk.add(expected);
        GpuDirectException e = assertThrows(GpuDirectException.class, b::nioBuffer);
        assertTrue(e.getMessage().contains("inputStream()"), e.getMessage());
      }
    }
    // One file per block on disk, holding its bytes, and only memory of the blocks in memory.
    assertEquals(onDisk.size(), made.size());
    assertEquals(made, existing(made));
    for (Path f : made) {
      byte[] inFile = Files.readAllBytes(f);
      assertTrue(onDisk.stream().anyMatch(b -> java.util.Arrays.equals(b, inFile)), f + " holds a block's bytes");
    }
    long inMemory = taken.stream().filter(b -> !b.onDisk()).mapToLong(FetchedBlock::size).sum();
    assertEquals(inMemory, reducer.allocator.outstandingBytes(), "only the blocks in memory hold memory");
    taken.forEach(FetchedBlock::close);
    assertEquals(List.of(), existing(made), "closing a block deletes its file");
    assertEquals(0, reducer.allocator.outstandingBytes());
  }

  /**
   * 12 MiB, against a reducer with 4 MiB of memory: into memory it fails on this side (no fetch
   * failure, the map output is fine); to disk it comes, a window at a time per stream.
   */
  @Test
  void aBlockLargerThanTheReducersMemoryComesThroughDisk() throws Exception {
    byte[] big = new byte[12 << 20];
    new Random(12).nextBytes(big);
    layout.write(2, 0, big);
    Map<InetSocketAddress, List<BlockToFetch>> blocks =
        from(server.port(), List.of(new BlockToFetch(ShuffleBlockId.of(2, 0, 0), big.length)));
    List<Path> made = Collections.synchronizedList(new ArrayList<>());
    try (BufferAllocator tight = BufferAllocator.root().newChildAllocator("tight reducer", 4 << 20)) {
      try (ShuffleBlockFetcher fetcher = ShuffleBlockFetcher.start(blocks, FetchLimits.SPARK_DEFAULTS,
          reducer.clients, tight)) {
        RuntimeException e = assertThrows(RuntimeException.class, fetcher::next);
        assertFalse(e instanceof ShuffleFetchException, "this side's memory is no fetch failure: " + e);
        assertTrue(e.getMessage().contains("tight reducer"), e.getMessage());
      }
      try (ShuffleBlockFetcher fetcher = ShuffleBlockFetcher.start(blocks, FetchLimits.SPARK_DEFAULTS,
          toDisk(tmp.resolve("big"), made), reducer.clients, tight);
          FetchedBlock b = fetcher.next()) {
        assertTrue(b.onDisk());
        assertEquals(0, tight.outstandingBytes(), "its windows' memory given back as they were written");
        assertArrayEquals(big, ShuffleFetches.readAll(b));
      }
      assertEquals(List.of(), existing(made));
    }
  }

  /** A window of a four-window block corrupt on the way: fetched again before it reaches the file. */
  @Test
  void aWindowCorruptOnTheWayIsFetchedAgainBeforeItReachesTheFile() throws Exception {
    List<Path> made = Collections.synchronizedList(new ArrayList<>());
    // One stream, so that the flipped connection carries the windows one after another.
    try (ShuffleFetches oneStream = new ShuffleFetches("fetch-to-disk-one-stream", config().streams(1).build());
        LoopbackCutter flip = new LoopbackCutter(server.port(), CHUNK + CHUNK / 2, 1)
            .corruptInsteadOfClose(Long.MAX_VALUE)) {
      Map<ShuffleBlockId, ShuffleFetches.Outcome> got = oneStream.fetch(flip.port(), FetchLimits.SPARK_DEFAULTS,
          toDisk(tmp.resolve("flipped-once"), made), List.of(block(4, 2)));
      ShuffleFetches.Outcome o = got.get(ShuffleBlockId.of(1, 4, 2));
      assertArrayEquals(bytes(4, 2), o.orThrow());
      assertTrue(o.onDisk());
      assertEquals(1, flip.faultsInjected(), "a byte of the second window was flipped");
      assertEquals(2, flip.connections(), "and the window fetched again on a new connection");
    }
    assertEquals(1, made.size());
    assertEquals(List.of(), existing(made));
  }

  @Test
  void aBlockCorruptOnEveryTryFailsAndItsFileIsDeleted() throws Exception {
    List<Path> made = Collections.synchronizedList(new ArrayList<>());
    try (LoopbackCutter flip = new LoopbackCutter(server.port(), 5_000, 100).corruptInsteadOfClose(Long.MAX_VALUE)) {
      ShuffleFetchException e = reducer.fetch(flip.port(), FetchLimits.SPARK_DEFAULTS,
          toDisk(tmp.resolve("flipped-always"), made), List.of(block(3, 1))).get(ShuffleBlockId.of(1, 3, 1))
          .fetchFailure();
      assertEquals(Reason.CORRUPT_IN_TRANSIT, e.reason(), e.getMessage());
      assertTrue(e.getMessage().contains("shuffle_1_3_1"), e.getMessage());
    }
    assertEquals(1, made.size(), "its file was made");
    assertEquals(List.of(), existing(made), "and deleted when it failed");
    assertEquals(0, reducer.allocator.outstandingBytes());
  }

  /** Closed before the task took them: the files of blocks in, and of those still arriving once in, deleted. */
  @Test
  void closingTheFetcherDeletesTheFilesOfBlocksNotTaken() throws Exception {
    List<Path> made = Collections.synchronizedList(new ArrayList<>());
    try (ShuffleBlockFetcher fetcher = ShuffleBlockFetcher.start(from(server.port(), everyBlock()),
        FetchLimits.SPARK_DEFAULTS, toDisk(tmp.resolve("dropped"), made), reducer.clients, reducer.allocator)) {
      fetcher.next().close();
      fetcher.next().close();
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while ((!existing(made).isEmpty() || reducer.allocator.outstandingBytes() > 0) && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertFalse(made.isEmpty());
    assertEquals(List.of(), existing(made));
    assertEquals(0, reducer.allocator.outstandingBytes());
  }

  /**
   * As Spark counts them: a block fetched to disk holds its size of spark.reducer.maxSizeInFlight
   * until the task takes it, as one in memory does (its file is no reason to ask for more), and one
   * over the whole budget goes alone.
   */
  @Test
  void aBlockFetchedToDiskCountsInFlightUntilTaken() throws Exception {
    // A server as an executor's is built, whose counters say what it was asked.
    try (BlockServer counted = BlockServer.builder().shuffleDirectories(layout.localDirs(), 64).secret(SECRET)
        .port(0).build().start()) {
      // Sizes as map statuses may report them: 30 goes to disk (over 20), 10s into memory; 45 in flight at most.
      long[] sizes = {30, 10, 10, 100, 10};
      List<BlockToFetch> blocks = new ArrayList<>();
      for (int m = 0; m < sizes.length; m++) {
        blocks.add(new BlockToFetch(ShuffleBlockId.of(1, m, 0), sizes[m]));
      }
      List<Path> made = Collections.synchronizedList(new ArrayList<>());
      try (ShuffleBlockFetcher f = ShuffleBlockFetcher.start(from(counted.port(), blocks), new FetchLimits(45, 100, 100),
          toDisk(20, tmp.resolve("in-flight"), made), reducer.clients, reducer.allocator)) {
        settlesAt(2, () -> counted.stats().requests());  // 30 and 10: another 10 would pass 45
        List<FetchedBlock> taken = new ArrayList<>();
        taken.add(f.next());
        taken.add(f.next());
        settlesAt(3, () -> counted.stats().requests());  // the second 10; the 100 waits for what is in flight
        taken.add(f.next());
        settlesAt(4, () -> counted.stats().requests());  // the 100, alone
        taken.add(f.next());
        settlesAt(5, () -> counted.stats().requests());
        taken.add(f.next());
        assertEquals(2, taken.stream().filter(FetchedBlock::onDisk).count(), "the 30 and the 100 came through files");
        taken.forEach(FetchedBlock::close);
      }
      assertEquals(2, made.size());
      assertEquals(List.of(), existing(made));
    }
  }
}
