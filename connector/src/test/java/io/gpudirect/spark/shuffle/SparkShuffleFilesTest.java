package io.gpudirect.spark.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.ClientContext;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.protocol.ChecksumAlgorithm;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.verbs.provider.RdmaProvider;
import io.gpudirect.verbs.ucx.UcxLibrary;
import io.gpudirect.shuffle.BlockToFetch;
import io.gpudirect.shuffle.FetchLimits;
import io.gpudirect.shuffle.FetchedBlock;
import io.gpudirect.shuffle.ShuffleBlockFetcher;
import io.gpudirect.shuffle.ShuffleClients;
import io.gpudirect.shuffle.ShuffleFetchException;
import io.gpudirect.spark.LocalSessions;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.spark.HashPartitioner;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.ShuffleBlockBatchId;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import scala.Option;
import scala.Tuple2;

/**
 * Shuffle files a real Spark wrote, served by a gpudirect server over its block manager's
 * directories and fetched by block id: every block and a range of blocks of every map output,
 * byte for byte what Spark's own {@code IndexShuffleBlockResolver} gives for the same ids. The
 * jobs run each of Spark's sort-shuffle writers (bypass-merge, unsafe, sort with map-side
 * combine), over two local directories, with map tasks that write nothing, the unsafe and sort
 * writers spilling several times each. The server sends Spark's partition checksums (the files
 * its writers committed beside the map outputs), so every block is also checked against them.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class SparkShuffleFilesTest {
  private static final byte[] SECRET = "this-application's-shuffle-secret".getBytes();
  private static final Pattern INDEX = Pattern.compile("shuffle_(\\d+)_(\\d+)_0\\.index");

  @TempDir static Path tmp;
  static SparkSession spark;
  /** Held so that Spark's cleaner keeps their shuffle files while the test reads them. */
  static List<JavaPairRDD<?, ?>> shuffled = new ArrayList<>();
  static BlockServer server;
  static IndexShuffleBlockResolver resolver;
  static List<Path> localDirs;

  @BeforeAll
  static void writeShuffles() throws IOException {
    spark = LocalSessions.builder("gpudirect-shuffle-files", 2)
        .config("spark.local.dir", Files.createDirectories(tmp.resolve("disk1")) + ","
            + Files.createDirectories(tmp.resolve("disk2")))
        .config("spark.shuffle.service.enabled", "false")
        .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
        // Spills merged into each map output, whose checksums Spark combines from the spills'.
        .config("spark.shuffle.spill.numElementsForceSpillThreshold", "1000")
        .getOrCreate();
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    List<Integer> numbers = new ArrayList<>();
    for (int i = 0; i < 30_000; i++) {
      numbers.add(i);
    }
    // Map task 3 of 6 has no rows: Spark writes its index of zeros and no data file.
    JavaPairRDD<Integer, String> pairs = jsc.parallelize(numbers, 6)
        .mapPartitionsWithIndex((i, it) -> {
          List<Integer> kept = new ArrayList<>();
          it.forEachRemaining(n -> {
            if (i != 3) {
              kept.add(n);
            }
          });
          return kept.iterator();
        }, true)
        .mapToPair(n -> new Tuple2<>(n % 1009, "value-" + n * 7919L));
    shuffle(pairs.partitionBy(new HashPartitioner(17)));   // bypass-merge writer: 17 files joined
    shuffle(pairs.partitionBy(new HashPartitioner(301)));  // unsafe writer: Kryo, > 200 partitions
    shuffle(pairs.reduceByKey((a, b) -> a.length() > b.length() ? a : b, 23)); // sort writer, map-side combine
    localDirs = Stream.of(SparkEnv.get().blockManager().diskBlockManager().localDirs())
        .map(File::toPath).toList();
    int subDirs = spark.sparkContext().conf().getInt("spark.diskStore.subDirectories", 64);
    resolver = (IndexShuffleBlockResolver) SparkEnv.get().shuffleManager().shuffleBlockResolver();
    var builder = BlockServer.builder().shuffleDirectories(localDirs, subDirs).secret(SECRET).port(0)
        .shuffleChecksums(ChecksumAlgorithm.ofSparkName(WriterChecksums.algorithm(spark.sparkContext().conf())));
    if (UcxLibrary.unavailableReason() == null) {
      // Its queue pairs too, for the fetch over UCX (over TCP or shared memory here).
      builder.rdma(RdmaMode.ON).rdmaProvider(RdmaProvider.UCX);
    }
    server = builder.build().start();
  }

  private static void shuffle(JavaPairRDD<?, ?> rdd) {
    rdd.count();
    shuffled.add(rdd);
  }

  @AfterAll
  static void stop() {
    LocalSessions.stop(spark, server);
  }

  /**
   * What Spark's own resolver gives for {@code id}. An empty block it gives as a segment of a data
   * file that may not exist (a map task with no rows writes none), which its reducers never read:
   * they leave out blocks of size 0.
   */
  private static byte[] sparkBytes(BlockId id) throws IOException {
    ManagedBuffer b = resolver.getBlockData(id, Option.empty());
    if (b.size() == 0) {
      return new byte[0];
    }
    ByteBuffer bytes = b.nioByteBuffer();
    byte[] out = new byte[bytes.remaining()];
    bytes.get(out);
    return out;
  }

  @Test
  void everyBlockOfEveryMapOutputIsTheBytesSparksResolverGives() throws IOException {
    assertEveryBlockIsSparks(ClientConfig.builder().secret(SECRET).transport("tcp").build());
  }

  /** The same blocks over the RDMA queue pair, through real UCX. */
  @Test
  void everyBlockOfEveryMapOutputOverUcxIsTheBytesSparksResolverGives() throws IOException {
    String missing = UcxLibrary.unavailableReason();
    assumeTrue(missing == null, "UCX is not installed here (apt-get install libucx0): " + missing);
    assertEveryBlockIsSparks(ClientConfig.builder().secret(SECRET).transport("rdma")
        .rdmaProvider(RdmaProvider.UCX).build());
  }

  private static void assertEveryBlockIsSparks(ClientConfig config) throws IOException {
    Map<ShuffleBlockId, byte[]> expected = new HashMap<>();
    List<BlockToFetch> blocks = new ArrayList<>();
    int emptyMapOutputs = 0;
    Random random = new Random(7);
    for (Path index : indexFiles()) {
      Matcher m = INDEX.matcher(index.getFileName().toString());
      assertTrue(m.matches());
      int shuffleId = Integer.parseInt(m.group(1));
      long mapId = Long.parseLong(m.group(2));
      int partitions = (int) (Files.size(index) / 8 - 1);
      for (int r = 0; r < partitions; r++) {
        ShuffleBlockId id = ShuffleBlockId.of(shuffleId, mapId, r);
        byte[] bytes = sparkBytes(new org.apache.spark.storage.ShuffleBlockId(shuffleId, mapId, r));
        expected.put(id, bytes);
        blocks.add(new BlockToFetch(id, bytes.length));
      }
      int start = random.nextInt(partitions);
      int end = start + 1 + random.nextInt(partitions - start);
      for (ShuffleBlockId range : List.of(new ShuffleBlockId(shuffleId, mapId, 0, partitions),
          new ShuffleBlockId(shuffleId, mapId, start, end))) {
        byte[] bytes = sparkBytes(new ShuffleBlockBatchId(shuffleId, mapId, range.startReduceId(), range.endReduceId()));
        expected.put(range, bytes);
        blocks.add(new BlockToFetch(range, bytes.length));
      }
      if (expected.get(new ShuffleBlockId(shuffleId, mapId, 0, partitions)).length == 0) {
        emptyMapOutputs++;
      }
    }
    assertEquals(3, expected.keySet().stream().map(ShuffleBlockId::shuffleId).distinct().count(), "three shuffles");
    assertEquals(18, indexFiles().size(), "six map outputs each");
    assertEquals(3, emptyMapOutputs, "the empty map task's, one per shuffle");

    Map<ShuffleBlockId, byte[]> fetched = new HashMap<>();
    try (ClientContext context = new ClientContext();
        ShuffleClients clients = new ShuffleClients(config, context);
        BufferAllocator memory = BufferAllocator.root().newChildAllocator("spark-shuffle-files-test", 64L << 20);
        ShuffleBlockFetcher fetcher = ShuffleBlockFetcher.start(
            Map.of(new InetSocketAddress("127.0.0.1", server.port()), blocks), FetchLimits.SPARK_DEFAULTS,
            clients, memory)) {
      while (fetcher.hasNext()) {
        try (FetchedBlock b = fetcher.next(); InputStream in = b.inputStream()) {
          fetched.put(b.id(), in.readAllBytes());
        }
      }
    }
    assertEquals(expected.keySet(), fetched.keySet());
    for (var e : expected.entrySet()) {
      assertTrue(java.util.Arrays.equals(e.getValue(), fetched.get(e.getKey())), e.getKey().name());
    }
  }

  /**
   * A byte flipped in a map output's data file on the disk after Spark wrote it: the block holding
   * it fails naming the partition and Spark's checksum, which the server's CRC32C of the rotten
   * bytes could not (ShuffleServingTest#aByteFlippedOnTheDiskIsServedAsItIs).
   */
  @Test
  void aByteFlippedOnTheDiskIsCaughtBySparksOwnChecksum() throws IOException {
    Path index = indexFiles().stream().filter(i -> {
      try {
        return Files.size(i) > 16 * 8 && readLong(i, 8) > 100;
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }).findFirst().orElseThrow();
    Matcher m = INDEX.matcher(index.getFileName().toString());
    assertTrue(m.matches());
    int shuffleId = Integer.parseInt(m.group(1));
    long mapId = Long.parseLong(m.group(2));
    assertTrue(Files.exists(resolver.getChecksumFile(shuffleId, mapId, "ADLER32", Option.empty()).toPath()),
        "Spark committed the map output's checksums");
    Path data = resolver.getDataFile(shuffleId, mapId).toPath();
    flip(data, 50);
    try (ClientContext context = new ClientContext();
        ShuffleClients clients = new ShuffleClients(ClientConfig.builder().secret(SECRET).transport("tcp")
            .maxRetries(1).build(), context);
        BufferAllocator memory = BufferAllocator.root().newChildAllocator("flipped-on-disk", 64L << 20);
        ShuffleBlockFetcher fetcher = ShuffleBlockFetcher.start(Map.of(new InetSocketAddress("127.0.0.1",
            server.port()), List.of(new BlockToFetch(ShuffleBlockId.of(shuffleId, mapId, 0), readLong(index, 8)))),
            FetchLimits.SPARK_DEFAULTS, clients, memory)) {
      ShuffleFetchException e = org.junit.jupiter.api.Assertions.assertThrows(ShuffleFetchException.class,
          fetcher::next);
      assertTrue(e.getMessage().contains("ADLER32 checksum of shuffle " + shuffleId + ", map " + mapId
          + ", reduce 0"), e.getMessage());
    } finally {
      flip(data, 50);
    }
  }

  private static long readLong(Path file, long at) throws IOException {
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file)) {
      ByteBuffer b = ByteBuffer.allocate(8);
      ch.read(b, at);
      return b.getLong(0);
    }
  }

  private static void flip(Path file, long at) throws IOException {
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
        java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(1);
      ch.read(b, at);
      b.put(0, (byte) (b.get(0) ^ 0x20)).rewind();
      ch.write(b, at);
    }
  }

  /** Every single-partition block of every map output with bytes, and Spark's decoding of each. */
  private static Map<ShuffleBlockId, byte[]> decodedBySpark(List<BlockToFetch> blocks) throws IOException {
    Map<ShuffleBlockId, byte[]> decoded = new HashMap<>();
    for (Path index : indexFiles()) {
      Matcher m = INDEX.matcher(index.getFileName().toString());
      assertTrue(m.matches());
      int shuffleId = Integer.parseInt(m.group(1));
      long mapId = Long.parseLong(m.group(2));
      for (int r = 0; r < Files.size(index) / 8 - 1; r++) {
        ShuffleBlockId id = ShuffleBlockId.of(shuffleId, mapId, r);
        byte[] bytes = sparkBytes(sparkId(id));
        if (bytes.length > 0) {
          blocks.add(new BlockToFetch(id, bytes.length));
          decoded.put(id, sparkDecode(id, new java.io.ByteArrayInputStream(bytes)));
        }
      }
    }
    return decoded;
  }

  private static BlockId sparkId(ShuffleBlockId id) {
    return new org.apache.spark.storage.ShuffleBlockId(id.shuffleId(), id.mapId(), id.startReduceId());
  }

  private static byte[] sparkDecode(ShuffleBlockId id, InputStream raw) throws IOException {
    try (InputStream in = SparkEnv.get().serializerManager().wrapStream(sparkId(id), raw)) {
      return in.readAllBytes();
    }
  }

  /**
   * Blocks decoded ahead of their task on two threads, from Spark's compressed shuffle files:
   * those that decode within their share of the budget come as Spark's serializer manager
   * decodes them, the others as fetched (decoded here the same), one whose bytes were damaged on
   * the way (a byte flipped before the codec saw it) as undecodable, never as bytes; and every
   * block's memory is given back.
   */
  @Test
  void blocksDecodedAheadAreWhatSparksSerializerManagerDecodes() throws Exception {
    List<BlockToFetch> blocks = new ArrayList<>();
    Map<ShuffleBlockId, byte[]> expected = decodedBySpark(blocks);
    ShuffleBlockId damaged = blocks.get(blocks.size() / 2).id();
    long budget = 2048;
    assertTrue(expected.values().stream().anyMatch(b -> b.length <= budget / 4)
        && expected.values().stream().anyMatch(b -> b.length > budget), "blocks on both sides of the budget");
    DecodeAhead.Decoder decoder = (id, raw) -> {
      if (!id.equals(damaged)) {
        return SparkEnv.get().serializerManager().wrapStream(sparkId(id), raw);
      }
      byte[] bytes = raw.readAllBytes();
      bytes[bytes.length / 2] ^= 0x5a;
      return SparkEnv.get().serializerManager().wrapStream(sparkId(id), new java.io.ByteArrayInputStream(bytes));
    };
    int decodedAhead = 0;
    int asFetched = 0;
    List<ShuffleBlockId> undecodable = new ArrayList<>();
    Map<ShuffleBlockId, byte[]> got = new HashMap<>();
    java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(2);
    try (ClientContext context = new ClientContext();
        ShuffleClients clients = new ShuffleClients(ClientConfig.builder().secret(SECRET).transport("tcp").build(),
            context);
        BufferAllocator memory = BufferAllocator.root().newChildAllocator("decode-ahead-test", 64L << 20)) {
      try (ShuffleBlockFetcher fetcher = ShuffleBlockFetcher.start(
              Map.of(new InetSocketAddress("127.0.0.1", server.port()), blocks), new FetchLimits(16 << 10, 8, 8),
              clients, memory);
          DecodeAhead ahead = new DecodeAhead(fetcher, blocks.size(), threads, 2, budget, decoder)) {
        while (ahead.hasNext()) {
          DecodeAhead.Ready r = ahead.next();
          assertTrue(r.failure() == null, () -> "fetched: " + r.failure());
          ShuffleBlockId id = r.block().id();
          if (r.undecodable() != null) {
            undecodable.add(id);
          } else if (r.decoded() != null) {
            decodedAhead++;
            got.put(id, r.decoded());
          } else {
            asFetched++;
            try (FetchedBlock b = r.block()) {
              got.put(id, sparkDecode(id, b.inputStream()));
            }
          }
        }
      }
      assertEquals(0, memory.outstandingBytes(), "every block's memory given back: " + memory.outstanding());
    } finally {
      threads.shutdownNow();
    }
    assertEquals(List.of(damaged), undecodable);
    assertTrue(decodedAhead > 0 && asFetched > 0, decodedAhead + " decoded ahead, " + asFetched + " as fetched");
    expected.remove(damaged);
    assertEquals(expected.keySet(), got.keySet());
    expected.forEach((id, bytes) -> assertTrue(java.util.Arrays.equals(bytes, got.get(id)), id.name()));
  }

  /**
   * A task that stops after its first block: the blocks decoded, being decoded and in flight are
   * all given back (those in flight once the executor's clients close, as they arrive or fail).
   */
  @Test
  void aTaskThatStopsEarlyLeavesNoBlockBehindItsDecoders() throws Exception {
    List<BlockToFetch> blocks = new ArrayList<>();
    decodedBySpark(blocks);
    java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(2);
    BufferAllocator memory = BufferAllocator.root().newChildAllocator("decode-ahead-stop-test", 64L << 20);
    try {
      try (ClientContext context = new ClientContext();
          ShuffleClients clients = new ShuffleClients(ClientConfig.builder().secret(SECRET).transport("tcp").build(),
              context);
          ShuffleBlockFetcher fetcher = ShuffleBlockFetcher.start(
              Map.of(new InetSocketAddress("127.0.0.1", server.port()), blocks), FetchLimits.SPARK_DEFAULTS,
              clients, memory);
          DecodeAhead ahead = new DecodeAhead(fetcher, blocks.size(), threads, 2, 1L << 20,
              (id, raw) -> SparkEnv.get().serializerManager().wrapStream(sparkId(id), raw))) {
        ahead.next().release();
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (memory.outstandingBytes() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertEquals(0, memory.outstandingBytes(), "every block's memory given back: " + memory.outstanding());
    } finally {
      threads.shutdownNow();
      memory.close();
    }
  }

  private static List<Path> indexFiles() throws IOException {
    List<Path> out = new ArrayList<>();
    for (Path dir : localDirs) {
      try (Stream<Path> files = Files.walk(dir)) {
        files.filter(f -> INDEX.matcher(f.getFileName().toString()).matches()).forEach(out::add);
      }
    }
    return out;
  }
}
