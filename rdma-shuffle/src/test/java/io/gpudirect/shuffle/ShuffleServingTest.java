package io.gpudirect.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.RemoteFileException;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.server.BlockServer;
import io.gpudirect.shuffle.ShuffleFetchException.Reason;
import io.gpudirect.testing.SparkShuffleLayout;
import io.gpudirect.testing.TestFiles;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
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
 * A server of an executor's shuffle files, written by hand in Spark's layout over two block
 * manager directories, and a reducer fetching blocks by their ids: every block and every range
 * of blocks as the files hold it, and each refusal naming the block.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShuffleServingTest {
  static final byte[] SECRET = "shuffle-secret-of-this-application".getBytes();
  /** The smallest answer a server may announce: blocks above it come in several windows. */
  static final int WINDOW = Protocol.MIN_MAX_READ_LENGTH;

  @TempDir static Path tmp;
  static SparkShuffleLayout layout;
  static BlockServer server;
  static ShuffleFetches reducer;
  /** Map 7 of shuffle 1: its partitions' bytes, some empty. */
  static byte[][] map7;

  @BeforeAll
  static void start() throws IOException {
    layout = new SparkShuffleLayout(List.of(tmp.resolve("disk1/blockmgr-a"), tmp.resolve("disk2/blockmgr-b")), 64);
    for (Path d : layout.localDirs()) {
      Files.createDirectories(d);
    }
    Random random = new Random(11);
    map7 = new byte[12][];
    for (int i = 0; i < map7.length; i++) {
      map7[i] = new byte[i % 4 == 1 ? 0 : random.nextInt(3000)];
      random.nextBytes(map7[i]);
    }
    layout.write(1, 7, map7);
    server = BlockServer.builder().shuffleDirectories(layout.localDirs(), 64).secret(SECRET)
        .maxReadLength(WINDOW).port(0).build().start();
    reducer = new ShuffleFetches("shuffle-serving-test", SECRET);
  }

  @AfterAll
  static void stop() {
    reducer.close();
    server.close();
  }

  @Test
  void everyBlockAndEveryRangeOfBlocksIsTheBytesTheIndexSays() {
    List<ShuffleBlockId> ids = new ArrayList<>();
    for (int start = 0; start < map7.length; start++) {
      for (int end = start + 1; end <= map7.length; end++) {
        ids.add(new ShuffleBlockId(1, 7, start, end));
      }
    }
    Map<ShuffleBlockId, ShuffleFetches.Outcome> got = reducer.fetch(server.port(),
        new FetchLimits(64 << 10, 8, 4), ShuffleFetches.blocks(ids));
    assertEquals(ids.size(), got.size());
    for (ShuffleBlockId id : ids) {
      assertArrayEquals(concat(map7, id.startReduceId(), id.endReduceId()), got.get(id).orThrow(), id.name());
    }
  }

  @Test
  void aMapOutputWithNoBytesHasNoDataFileAndEmptyBlocks() throws IOException {
    layout.write(1, 8, new byte[0], new byte[0], new byte[0]);
    assertTrue(!Files.exists(layout.data(1, 8)), "as Spark writes it: no data file");
    assertArrayEquals(new byte[0], reducer.fetchOne(server.port(), ShuffleBlockId.of(1, 8, 2)).orThrow());
    assertArrayEquals(new byte[0], reducer.fetchOne(server.port(), new ShuffleBlockId(1, 8, 0, 3)).orThrow());
  }

  /** Longer than the server's largest answer: windows, each of the first's version. */
  @Test
  void aBlockLongerThanOneAnswerComesInWindows() throws IOException {
    byte[] big = new byte[3 * WINDOW + 1234];
    new Random(5).nextBytes(big);
    layout.write(2, 1, new byte[100], big, new byte[10]);
    long requests = server.stats().requests();
    Map<ShuffleBlockId, ShuffleFetches.Outcome> got = reducer.fetch(server.port(), FetchLimits.SPARK_DEFAULTS,
        ShuffleFetches.blocks(List.of(ShuffleBlockId.of(2, 1, 1))));
    assertArrayEquals(big, got.get(ShuffleBlockId.of(2, 1, 1)).orThrow());
    assertEquals(4, server.stats().requests() - requests, "4 windows of at most " + WINDOW + " bytes");

    var fetcher = ShuffleBlockFetcher.start(Map.of(new InetSocketAddress("127.0.0.1", server.port()),
        List.of(new BlockToFetch(ShuffleBlockId.of(2, 1, 1), big.length))), FetchLimits.SPARK_DEFAULTS,
        reducer.clients, reducer.allocator);
    try (fetcher; FetchedBlock b = fetcher.next()) {
      assertEquals(big.length, b.size());
      assertTrue(assertThrows(RuntimeException.class, b::nioBuffer).getMessage().contains("inputStream()"));
    }
  }

  @Test
  void aSmallBlockIsOneBuffer() {
    var fetcher = ShuffleBlockFetcher.start(Map.of(new InetSocketAddress("127.0.0.1", server.port()),
        List.of(new BlockToFetch(ShuffleBlockId.of(1, 7, 0), map7[0].length))), FetchLimits.SPARK_DEFAULTS,
        reducer.clients, reducer.allocator);
    try (fetcher; FetchedBlock b = fetcher.next()) {
      ByteBuffer bytes = b.nioBuffer();
      byte[] got = new byte[bytes.remaining()];
      bytes.get(got);
      assertArrayEquals(map7[0], got);
      assertTrue(reducer.allocator.outstandingBytes() >= map7[0].length, "charged while held");
    }
    assertEquals(0, reducer.allocator.outstandingBytes(), "given back when closed");
  }

  @Test
  void aMapOutputThisExecutorDoesNotHaveIsRefusedNamingTheBlock() {
    ShuffleFetchException e = reducer.fetchOne(server.port(), ShuffleBlockId.of(1, 99, 3)).fetchFailure();
    assertEquals(Reason.BLOCK_UNAVAILABLE, e.reason());
    assertEquals(ShuffleBlockId.of(1, 99, 3), e.block());
    assertEquals(ErrorCode.NOT_FOUND, code(e));
    assertTrue(e.getMessage().contains("shuffle_1_99_3") && e.getMessage().contains("shuffle 1, map 99, reduce 3")
        && e.getMessage().contains("shuffle_1_99_0.index"), e.getMessage());
  }

  @Test
  void aReduceIdBeyondTheMapOutputsPartitionsIsRefused() {
    ShuffleFetchException e = reducer.fetchOne(server.port(), new ShuffleBlockId(1, 7, 10, 13)).fetchFailure();
    assertEquals(Reason.BLOCK_UNAVAILABLE, e.reason());
    assertEquals(ErrorCode.OUT_OF_RANGE, code(e));
    assertTrue(e.getMessage().contains("reduce 10 to 13 (exclusive)") && e.getMessage().contains("12 reduce partitions"),
        e.getMessage());
  }

  @Test
  void malformedIndexesAreRefusedAsCorruptMapOutputs() throws IOException {
    layout.write(3, 1, new byte[10], new byte[20], new byte[30]);
    Files.write(layout.index(3, 1), Arrays.copyOf(Files.readAllBytes(layout.index(3, 1)), 29));
    assertCorrupt(ShuffleBlockId.of(3, 1, 0), "29 bytes, not the 8-byte offsets");

    layout.write(3, 2, new byte[10], new byte[20]);
    layout.writeIndex(3, 2, 5, 10, 30);
    assertCorrupt(ShuffleBlockId.of(3, 2, 1), "first offset is 5, not 0");

    // Partition 2 would be given bytes of partition 1: refused for every block, also the good-looking first.
    layout.write(3, 3, new byte[10], new byte[20], new byte[30]);
    layout.writeIndex(3, 3, 0, 30, 10, 60);
    assertCorrupt(ShuffleBlockId.of(3, 3, 0), "the offset of partition 2 is 10, before the one of partition 1 (30)");

    layout.write(3, 4, new byte[10]);
    layout.writeIndex(3, 4, 0);
    assertCorrupt(ShuffleBlockId.of(3, 4, 0), "8 bytes");
  }

  @Test
  void aTruncatedOrMissingDataFileIsRefusedAsCorrupt() throws IOException {
    layout.write(4, 1, new byte[100], new byte[200]);
    try (var fc = java.nio.channels.FileChannel.open(layout.data(4, 1), java.nio.file.StandardOpenOption.WRITE)) {
      fc.truncate(250);
    }
    assertCorrupt(ShuffleBlockId.of(4, 1, 0), "its last offset is 300 but the data file has 250 bytes");

    layout.write(4, 2, new byte[100]);
    Files.delete(layout.data(4, 2));
    assertCorrupt(ShuffleBlockId.of(4, 2, 0), "its last offset is 100 but there is no data file");
  }

  /**
   * Only the sender's check can catch corruption on the way (CRC32C); a byte flipped on the disk
   * is served as it is: the index and the lengths still agree, and the server has no checksum of
   * the map output's bytes. That is what Spark's own shuffle checksums (its .checksum files) and
   * its codecs' framing are for, on the reducer's side.
   */
  @Test
  void aByteFlippedOnTheDiskIsServedAsItIs() throws IOException {
    byte[] p = new byte[500];
    new Random(3).nextBytes(p);
    layout.write(5, 1, p);
    byte[] onDisk = Files.readAllBytes(layout.data(5, 1));
    onDisk[123] ^= 0x40;
    Files.write(layout.data(5, 1), onDisk);
    assertArrayEquals(onDisk, reducer.fetchOne(server.port(), ShuffleBlockId.of(5, 1, 0)).orThrow());
  }

  /** A sub-directory or a file swapped for a symlink out of the block manager's directories. */
  @Test
  void nothingOutsideTheShuffleDirectoriesIsServedThroughASymlink() throws IOException {
    Path outside = tmp.resolve("outside");
    SparkShuffleLayout elsewhere = new SparkShuffleLayout(List.of(outside.resolve("1"), outside.resolve("2")), 64);
    byte[] secret = TestFiles.write(outside.resolve("secret.bin"), 64, 9);

    // The map output's own files are links to a real map output elsewhere.
    elsewhere.write(6, 1, secret);
    Files.createDirectories(layout.index(6, 1).getParent());
    Files.createDirectories(layout.data(6, 1).getParent());
    Files.createSymbolicLink(layout.index(6, 1), elsewhere.index(6, 1));
    Files.createSymbolicLink(layout.data(6, 1), elsewhere.data(6, 1));
    ShuffleFetchException e = reducer.fetchOne(server.port(), ShuffleBlockId.of(6, 1, 0)).fetchFailure();
    assertEquals(Reason.BLOCK_UNAVAILABLE, e.reason());
    assertTrue(e.getMessage().contains("shuffle_6_1_0"), e.getMessage());

    // A whole sub-directory is a link to one outside that holds a map output's index.
    long map = 100;
    while (Files.exists(layout.index(6, map).getParent())) {
      map++;
    }
    Path linked = Files.createDirectories(outside.resolve("linked-sub"));
    Files.createSymbolicLink(layout.index(6, map).getParent(), linked);
    try (var out = new java.io.DataOutputStream(Files.newOutputStream(layout.index(6, map)))) {
      out.writeLong(0);
      out.writeLong(0);
    }
    ShuffleFetchException f = reducer.fetchOne(server.port(), ShuffleBlockId.of(6, map, 0)).fetchFailure();
    assertEquals(Reason.BLOCK_UNAVAILABLE, f.reason(), f.getMessage());
    assertTrue(f.getMessage().contains("shuffle_6_" + map + "_0"), f.getMessage());
  }

  @Test
  void aReducerWithAnotherApplicationsSecretIsRefused() {
    try (ShuffleFetches stranger = new ShuffleFetches("shuffle-stranger", "another-applications-secret".getBytes())) {
      ShuffleFetchException e = stranger.fetchOne(server.port(), ShuffleBlockId.of(1, 7, 0)).fetchFailure();
      assertEquals(Reason.REFUSED, e.reason());
      assertTrue(e.getMessage().toLowerCase().contains("secret"), e.getMessage());
    }
  }

  @Test
  void aShuffleServerServesNoFilesByPathAndAFileServerNoBlocks(@TempDir Path root) throws IOException {
    try (var client = io.gpudirect.client.BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()),
        io.gpudirect.client.ClientConfig.builder().secret(SECRET).transport("tcp").build())) {
      RemoteFileException e = assertThrows(RemoteFileException.class,
          () -> client.stat(layout.localDirs().get(0).relativize(layout.index(1, 7)).toString()));
      assertTrue(e.getMessage().contains("serves shuffle blocks only"), e.getMessage());
    }
    try (BlockServer files = BlockServer.builder().root(root).port(0).build().start();
        ShuffleFetches other = new ShuffleFetches("shuffle-file-server", (byte[]) null)) {
      ShuffleFetchException e = other.fetchOne(files.port(), ShuffleBlockId.of(1, 7, 0)).fetchFailure();
      assertEquals(Reason.REFUSED, e.reason());
      assertTrue(e.getMessage().contains("serves no shuffle directories"), e.getMessage());
    }
  }

  private static void assertCorrupt(ShuffleBlockId id, String why) {
    ShuffleFetchException e = reducer.fetchOne(server.port(), id).fetchFailure();
    assertEquals(Reason.MAP_OUTPUT_CORRUPT, e.reason(), e.getMessage());
    assertEquals(ErrorCode.CORRUPT_MAP_OUTPUT, code(e));
    assertTrue(e.getMessage().contains(id.name()) && e.getMessage().contains(id.describe())
        && e.getMessage().contains(why), e.getMessage());
  }

  static ErrorCode code(ShuffleFetchException e) {
    return ((RemoteFileException) e.getCause()).code();
  }

  static byte[] concat(byte[][] parts, int from, int to) {
    int n = 0;
    for (int i = from; i < to; i++) {
      n += parts[i].length;
    }
    ByteBuffer b = ByteBuffer.allocate(n);
    for (int i = from; i < to; i++) {
      b.put(parts[i]);
    }
    return b.array();
  }
}
