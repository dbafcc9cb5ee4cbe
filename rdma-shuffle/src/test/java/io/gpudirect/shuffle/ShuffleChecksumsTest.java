package io.gpudirect.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.ChecksumAlgorithm;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.server.BlockServer;
import io.gpudirect.shuffle.ShuffleFetchException.Reason;
import io.gpudirect.testing.SparkShuffleLayout;
import io.gpudirect.transport.PartitionChecksumMismatchException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Blocks checked against the checksums Spark's writer keeps per partition (its
 * {@code .checksum.ALGORITHM} file, written here by hand as Spark writes it) instead of a CRC32C
 * the server computes: every block and range, with partitions that cross the edges of the
 * server's windows (64 KiB), comes through for each algorithm; a byte flipped on the map
 * output's disk, which the server's own CRC32C cannot see, fails the fetch naming the partition
 * and the checksum; checksum files that are missing, short or not Spark's leave the server to
 * CRC32C, and one that lies is a fetch failure, never taken as good bytes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShuffleChecksumsTest {
  static final byte[] SECRET = ShuffleServingTest.SECRET;
  static final int WINDOW = Protocol.MIN_MAX_READ_LENGTH;
  /** Partitions of one map output: some empty, two crossing windows' edges. */
  static final int[] SIZES = {3000, 0, 100_000, 500, 0, 150_000, 7};

  @TempDir static Path tmp;
  static SparkShuffleLayout layout;
  static ShuffleFetches reducer;
  static final Map<ChecksumAlgorithm, BlockServer> servers = new java.util.EnumMap<>(ChecksumAlgorithm.class);

  @BeforeAll
  static void start() throws IOException {
    layout = new SparkShuffleLayout(List.of(tmp.resolve("d1/blockmgr-a"), tmp.resolve("d2/blockmgr-b")), 64);
    for (Path d : layout.localDirs()) {
      Files.createDirectories(d);
    }
    for (ChecksumAlgorithm a : ChecksumAlgorithm.values()) {
      servers.put(a, BlockServer.builder().shuffleDirectories(layout.localDirs(), 64).shuffleChecksums(a)
          .secret(SECRET).maxReadLength(WINDOW).port(0).build().start());
    }
    reducer = new ShuffleFetches("shuffle-checksums-test", SECRET);
  }

  @AfterAll
  static void stop() {
    reducer.close();
    servers.values().forEach(BlockServer::close);
  }

  static byte[][] partitions(long seed) {
    Random random = new Random(seed);
    byte[][] p = new byte[SIZES.length][];
    for (int i = 0; i < p.length; i++) {
      p[i] = new byte[SIZES[i]];
      random.nextBytes(p[i]);
    }
    return p;
  }

  static void write(int shuffle, long map, ChecksumAlgorithm a, byte[][] partitions) throws IOException {
    layout.writeWithChecksums(shuffle, map, a.name(), a::create, partitions);
  }

  static byte[] concat(byte[][] parts, int from, int to) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    for (int i = from; i < to; i++) {
      out.writeBytes(parts[i]);
    }
    return out.toByteArray();
  }

  static List<Throwable> causes(Throwable t) {
    List<Throwable> out = new ArrayList<>();
    for (Throwable c = t; c != null && !out.contains(c); c = c.getCause()) {
      out.add(c);
    }
    return out;
  }

  static void flip(Path file, long at) throws IOException {
    byte[] b = Files.readAllBytes(file);
    b[(int) at] ^= 0x10;
    Files.write(file, b);
  }

  @ParameterizedTest
  @EnumSource(ChecksumAlgorithm.class)
  void everyBlockAndRangeComesThroughCheckedAgainstSparksChecksums(ChecksumAlgorithm a) throws IOException {
    int shuffle = 10 + a.ordinal();
    byte[][] map = partitions(shuffle);
    write(shuffle, 1, a, map);
    List<ShuffleBlockId> ids = new ArrayList<>();
    for (int start = 0; start < map.length; start++) {
      for (int end = start + 1; end <= map.length; end++) {
        ids.add(new ShuffleBlockId(shuffle, 1, start, end));
      }
    }
    Map<ShuffleBlockId, ShuffleFetches.Outcome> got = reducer.fetch(servers.get(a).port(),
        FetchLimits.SPARK_DEFAULTS, ShuffleFetches.blocks(ids));
    for (ShuffleBlockId id : ids) {
      assertArrayEquals(concat(map, id.startReduceId(), id.endReduceId()), got.get(id).orThrow(), id.name());
    }
  }

  /**
   * Rotten on the disk after the map task wrote it: the index and the lengths still agree, and a
   * CRC32C the server computed would be of the rotten bytes. Spark's checksum was computed as the
   * writer wrote them: in a partition held in one window, and in one that crosses windows' edges
   * (checked once all its windows are in). Before protocol version 8 the flipped bytes were
   * served as they are (ShuffleServingTest#aByteFlippedOnTheDiskIsServedAsItIs).
   */
  @Test
  void aByteFlippedOnTheDiskIsCaughtBySparksChecksum() throws IOException {
    byte[][] map = partitions(20);
    write(20, 1, ChecksumAlgorithm.ADLER32, map);
    flip(layout.data(20, 1), 123);
    flip(layout.data(20, 1), SIZES[0] + 80_000);
    write(20, 2, ChecksumAlgorithm.ADLER32, map);
    flip(layout.data(20, 2), SIZES[0] + SIZES[2] + SIZES[3] + 70_000);
    int port = servers.get(ChecksumAlgorithm.ADLER32).port();

    // Checked with its window, which is fetched again (over a new connection) before it fails.
    ShuffleFetchException inOneWindow = reducer.fetchOne(port, ShuffleBlockId.of(20, 1, 0)).fetchFailure();
    assertEquals(Reason.MAP_OUTPUT_CORRUPT, inOneWindow.reason(), inOneWindow.getMessage());
    assertTrue(inOneWindow.getMessage().contains("ADLER32 checksum of shuffle 20, map 1, reduce 0 (3000 bytes"),
        inOneWindow.getMessage());
    assertTrue(inOneWindow.getMessage().contains("still wrong after 3 attempt(s)"), inOneWindow.getMessage());
    assertTrue(causes(inOneWindow).stream().anyMatch(PartitionChecksumMismatchException.class::isInstance),
        causes(inOneWindow).toString());

    // Checked once all its windows are in: a block of one partition longer than a window, and a
    // partition crossing windows' edges in a range of them.
    ShuffleFetchException twoWindows = reducer.fetchOne(port, ShuffleBlockId.of(20, 1, 2)).fetchFailure();
    assertEquals(Reason.MAP_OUTPUT_CORRUPT, twoWindows.reason(), twoWindows.getMessage());
    assertTrue(twoWindows.getMessage().contains("ADLER32 checksum of shuffle 20, map 1, reduce 2 (100000 bytes"),
        twoWindows.getMessage());
    ShuffleFetchException inARange = reducer.fetchOne(port, new ShuffleBlockId(20, 2, 1, 7)).fetchFailure();
    assertEquals(Reason.MAP_OUTPUT_CORRUPT, inARange.reason(), inARange.getMessage());
    assertTrue(inARange.getMessage().contains("ADLER32 checksum of shuffle 20, map 2, reduce 5 (150000 bytes"),
        inARange.getMessage());

    // The map output's other partitions are as written.
    assertArrayEquals(concat(map, 3, 5), reducer.fetchOne(port, new ShuffleBlockId(20, 2, 3, 5)).orThrow());
  }

  /**
   * No checksum file (Spark's checksums off), one of another length than the index's partitions,
   * one with a value no 32-bit checksum has: served with the server's CRC32C instead, every byte.
   */
  @Test
  void withoutAUsableChecksumFileTheServerFallsBackToCrc32c() throws IOException {
    byte[][] map = partitions(30);
    int port = servers.get(ChecksumAlgorithm.CRC32).port();
    layout.write(30, 1, map);
    layout.write(30, 2, map);
    layout.writeChecksums(30, 2, "CRC32", 1, 2, 3);
    layout.write(30, 3, map);
    long[] notChecksums = new long[map.length];
    notChecksums[2] = 1L << 40;
    layout.writeChecksums(30, 3, "CRC32", notChecksums);
    // Checksums of another algorithm than the server's are not looked for.
    write(30, 4, ChecksumAlgorithm.ADLER32, map);
    for (long m = 1; m <= 4; m++) {
      ShuffleBlockId all = new ShuffleBlockId(30, m, 0, map.length);
      assertArrayEquals(concat(map, 0, map.length), reducer.fetchOne(port, all).orThrow(), all.name());
    }
  }

  /**
   * A range of as many partitions as an answer lists (their checksums fill most of its header)
   * comes with them; one of a partition more, with the server's CRC32C. A byte flipped in either:
   * the first fails naming Spark's checksum, the second passes, as the server's CRC32C of the
   * rotten bytes cannot see it.
   */
  @Test
  void aRangeOfMorePartitionsThanAnAnswerListsIsCheckedWithCrc32c() throws IOException {
    int max = io.gpudirect.protocol.PartitionChecksums.MAX_PARTITIONS;
    byte[][] map = new byte[max + 10][];
    Random random = new Random(50);
    for (int i = 0; i < map.length; i++) {
      map[i] = new byte[1 + random.nextInt(60)];
      random.nextBytes(map[i]);
    }
    write(50, 1, ChecksumAlgorithm.CRC32, map);
    int port = servers.get(ChecksumAlgorithm.CRC32).port();
    ShuffleBlockId listed = new ShuffleBlockId(50, 1, 0, max);
    ShuffleBlockId tooMany = new ShuffleBlockId(50, 1, 0, max + 1);
    assertArrayEquals(concat(map, 0, max), reducer.fetchOne(port, listed).orThrow());
    assertArrayEquals(concat(map, 0, max + 1), reducer.fetchOne(port, tooMany).orThrow());

    byte[] data = Files.readAllBytes(layout.data(50, 1));
    flip(layout.data(50, 1), 10);
    assertTrue(reducer.fetchOne(port, listed).fetchFailure().getMessage()
        .contains("CRC32 checksum of shuffle 50, map 1, reduce 0"));
    data[10] ^= 0x10;
    assertArrayEquals(java.util.Arrays.copyOf(data, concat(map, 0, max + 1).length),
        reducer.fetchOne(port, tooMany).orThrow());
  }

  /** A checksum file that lies (well-formed, wrong): a fetch failure naming the partition, never good bytes. */
  @Test
  void aChecksumFileThatLiesFailsTheFetch() throws IOException {
    byte[][] map = partitions(40);
    layout.write(40, 1, map);
    long[] values = new long[map.length];
    for (int i = 0; i < map.length; i++) {
      java.util.zip.CRC32C c = new java.util.zip.CRC32C();
      c.update(map[i]);
      values[i] = i == 3 ? c.getValue() ^ 1 : c.getValue();
    }
    layout.writeChecksums(40, 1, "CRC32C", values);
    int port = servers.get(ChecksumAlgorithm.CRC32C).port();
    assertArrayEquals(map[2], reducer.fetchOne(port, ShuffleBlockId.of(40, 1, 2)).orThrow());
    ShuffleFetchException e = reducer.fetchOne(port, new ShuffleBlockId(40, 1, 0, 7)).fetchFailure();
    assertTrue(e.getMessage().contains("CRC32C checksum of shuffle 40, map 1, reduce 3 (500 bytes"), e.getMessage());
  }
}
