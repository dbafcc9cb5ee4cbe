package io.gpudirect.spark.shuffle;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.max;
import static org.apache.spark.sql.functions.min;
import static org.apache.spark.sql.functions.sum;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.spark.LocalSessions;
import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.spark.HashPartitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.executor.ShuffleReadMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * Remote blocks larger than {@code spark.network.maxRemoteBlockSizeFetchToMem} (64k here) fetched
 * to a file in the block manager's directories, as Spark's own fetcher does, on a two-executor
 * cluster with gpudirect's shuffle manager: the rows are those of Spark's own shuffle, Spark's
 * "remote bytes read to disk" counts them, a reduce task sees its blocks' files while it reads,
 * and none is left after the job, nor after a job whose blocks were damaged on the map side's
 * disk (fetch failures, Spark's rerun, every row once).
 */
@org.junit.jupiter.api.Tag("spark35-line")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ShuffleClusterFetchToDiskTest {
  static final String TEMP_FILE_PREFIX = "temp_local_";
  static final int MAPS = 8;
  static final int ROWS_PER_MAP = 10_000;

  @TempDir static Path tmp;
  static ShuffleCluster cluster;
  static JavaSparkContext jsc;
  static final RemoteBytes remoteBytes = new RemoteBytes();
  /** The rows of {@link #query} with Spark's own shuffle, on a local Spark (one session at a time per JVM). */
  static List<String> expected;

  /** Remote bytes read, and those of them fetched to disk, summed over the finished tasks. */
  static final class RemoteBytes extends SparkListener {
    long read;
    long toDisk;

    @Override
    public synchronized void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.taskMetrics() != null) {
        ShuffleReadMetrics r = end.taskMetrics().shuffleReadMetrics();
        read += r.remoteBytesRead();
        toDisk += r.remoteBytesReadToDisk();
      }
    }

    synchronized long[] takeAndReset() {
      long[] out = {read, toDisk};
      read = 0;
      toDisk = 0;
      return out;
    }
  }

  @BeforeAll
  static void startCluster() throws Exception {
    SparkSession local = LocalSessions.builder("spark-shuffle-reference", 2)
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.autoBroadcastJoinThreshold", "-1")
        .getOrCreate();
    try {
      expected = query(local);
    } finally {
      local.stop();
    }
    cluster = ShuffleCluster.start("gpudirect-shuffle-to-disk", tmp,
        Map.of("spark.network.maxRemoteBlockSizeFetchToMem", "64k"));
    cluster.spark.sparkContext().addSparkListener(remoteBytes);
    jsc = JavaSparkContext.fromSparkContext(cluster.spark.sparkContext());
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** A join whose larger side's rows (a 64-character hash each) make blocks of some 200 KB; then with AQE. */
  static List<String> query(SparkSession spark) {
    List<String> out = new ArrayList<>();
    for (boolean aqe : new boolean[] {false, true}) {
      spark.conf().set("spark.sql.adaptive.enabled", aqe);
      Dataset<Row> facts = spark.range(0, 120_000, 1, 4)
          .selectExpr("id", "id % 1000 as k", "sha2(cast(id as string), 256) as s");
      Dataset<Row> dims = spark.range(0, 1000, 1, 2).selectExpr("id as k", "concat('name-', id % 300) as name");
      facts.join(dims, "k").groupBy("name").agg(count("*"), sum("id"), max("s"), min("s"))
          .collectAsList().stream().map(r -> (aqe ? "AQE " : "") + r).sorted().forEach(out::add);
    }
    return out;
  }

  @Test
  @Order(1)
  void blocksOverTheLimitGoThroughDiskAndGiveSparksRows() throws Exception {
    cluster.settled();
    remoteBytes.takeAndReset();

    assertEquals(expected, query(cluster.spark));
    cluster.settled();
    long[] bytes = remoteBytes.takeAndReset();
    assertEquals(0, cluster.fetchFailures.get(), "fetch failures");
    // The small side's blocks are under the limit and come into memory.
    assertTrue(bytes[1] > 0 && bytes[1] < bytes[0], "remote bytes read to disk: " + bytes[1] + " of " + bytes[0]);
    assertNoFetchFilesLeft();
  }

  /** Row {@code n}: its key, and 100 random characters that a codec cannot make much smaller. */
  static Tuple2<Integer, String> row(int n) {
    Random r = new Random(n);
    StringBuilder s = new StringBuilder(100);
    for (int i = 0; i < 100; i++) {
      s.append((char) ('!' + r.nextInt(90)));
    }
    return new Tuple2<>(n, s.toString());
  }

  /** Rows hashed into 4 partitions: each block some 250 KB, and the map stage run. */
  static JavaPairRDD<Integer, String> shuffled() {
    JavaPairRDD<Integer, String> rdd = jsc.parallelize(IntStream.range(0, MAPS).boxed().toList(), MAPS)
        .flatMapToPair(m -> IntStream.range(m * ROWS_PER_MAP, (m + 1) * ROWS_PER_MAP)
            .mapToObj(ShuffleClusterFetchToDiskTest::row).iterator())
        .partitionBy(new HashPartitioner(4));
    assertEquals(MAPS * ROWS_PER_MAP, rdd.count());
    return rdd;
  }

  static void assertEveryRowOnce(List<Tuple2<Integer, String>> collected) {
    List<Tuple2<Integer, String>> rows = new ArrayList<>(collected);
    rows.sort((a, b) -> Integer.compare(a._1(), b._1()));
    assertEquals(MAPS * ROWS_PER_MAP, rows.size());
    for (int n = 0; n < rows.size(); n++) {
      assertEquals(row(n), rows.get(n));
    }
  }

  /**
   * Each reduce task, after its first record, looks in its executor's directories for its
   * fetched blocks' files (its other blocks arrive meanwhile, and stay until it takes them).
   */
  @Test
  @Order(2)
  void aReduceTaskReadsItsLargeBlocksFromFilesInSparksDirectories() throws Exception {
    JavaPairRDD<Integer, String> rdd = shuffled();
    cluster.settled();
    remoteBytes.takeAndReset();
    List<Long> filesSeen = new ArrayList<>();
    List<Tuple2<Integer, String>> rows = new ArrayList<>();
    for (Tuple2<Integer, Object> t : rdd.mapPartitions(ShuffleClusterFetchToDiskTest::lookingForFetchFiles).collect()) {
      if (t._1() < 0) {
        filesSeen.add((Long) t._2());
      } else {
        rows.add(new Tuple2<>(t._1(), (String) t._2()));
      }
    }
    assertEveryRowOnce(rows);
    assertTrue(filesSeen.stream().anyMatch(n -> n > 0), "fetch files seen by the reduce tasks: " + filesSeen);
    cluster.settled();
    long[] bytes = remoteBytes.takeAndReset();
    assertTrue(bytes[0] > 0 && bytes[1] == bytes[0], "every remote block is over 64k, so all went to disk: "
        + bytes[1] + " of " + bytes[0]);
    assertNoFetchFilesLeft();
  }

  /** A reduce task's records, and (key -1) how many fetch files its executor held after its first. */
  private static Iterator<Tuple2<Integer, Object>> lookingForFetchFiles(Iterator<Tuple2<Integer, String>> records)
      throws Exception {
    List<Tuple2<Integer, Object>> out = new ArrayList<>();
    if (records.hasNext()) {
      Tuple2<Integer, String> first = records.next();
      out.add(new Tuple2<>(first._1(), first._2()));
    }
    long seen = 0;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    while (seen == 0 && System.nanoTime() < deadline) {
      Thread.sleep(20);
      seen = fetchFiles(Stream.of(SparkEnv.get().blockManager().diskBlockManager().localDirs()).map(File::toPath)
          .toList()).size();
    }
    records.forEachRemaining(r -> out.add(new Tuple2<>(r._1(), r._2())));
    out.add(new Tuple2<>(-1, seen));
    return out.iterator();
  }

  /**
   * One executor's data files with a byte flipped in each tenth: the other's reducers fetch their
   * blocks to disk, the codec finds the damage as they are read, and they are fetch failures, the
   * map outputs are written again, every row comes back once, and no fetch file is left.
   */
  @Test
  @Order(3)
  void aDamagedBlockFetchedToDiskIsAFetchFailureAndItsFileIsRemoved() throws Exception {
    JavaPairRDD<Integer, String> rdd = shuffled();
    int shuffleId = ((ShuffleDependency<?, ?, ?>) rdd.rdd().dependencies().head()).shuffleId();
    Map<Path, List<Path>> byExecutor = cluster.dataFiles(shuffleId);
    assertEquals(2, byExecutor.size(), "both executors ran map tasks: " + byExecutor.keySet());
    for (Path data : byExecutor.values().iterator().next()) {
      try (FileChannel ch = FileChannel.open(data, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
        for (long at = ch.size() / 20; at < ch.size(); at += Math.max(1, ch.size() / 10)) {
          java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1);
          ch.read(b, at);
          b.put(0, (byte) (b.get(0) ^ 0x5a));
          ch.write(b.rewind(), at);
        }
      }
    }
    long failuresBefore = cluster.settled().fetchFailures.get();
    remoteBytes.takeAndReset();
    assertEveryRowOnce(rdd.collect());
    assertTrue(cluster.settled().fetchFailures.get() > failuresBefore, "the damaged blocks were fetch failures");
    assertTrue(remoteBytes.takeAndReset()[1] > 0, "blocks were fetched to disk");
    assertNoFetchFilesLeft();
  }

  /**
   * Every fetch file on the executors is deleted once read, or when its task ends (blocks still
   * arriving then, once in). The driver's are Spark's: it fetches task results over the same
   * limit to its own temporary files, deleted once the garbage collector has their buffers.
   */
  private static void assertNoFetchFilesLeft() throws Exception {
    List<Path> driver = Stream.of(SparkEnv.get().blockManager().diskBlockManager().localDirs())
        .map(File::toPath).toList();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    List<Path> left;
    do {
      Thread.sleep(50);
      left = fetchFiles(List.of(tmp)).stream()
          .filter(f -> driver.stream().noneMatch(f::startsWith)).toList();
    } while (!left.isEmpty() && System.nanoTime() < deadline);
    assertEquals(List.of(), left, "fetch files left on the executors");
  }

  /** The files Spark's temporary local blocks are, under {@code dirs}. */
  private static List<Path> fetchFiles(List<Path> dirs) throws IOException {
    List<Path> out = new ArrayList<>();
    for (Path dir : dirs) {
      try (Stream<Path> files = Files.walk(dir)) {
        files.filter(f -> f.getFileName().toString().startsWith(TEMP_FILE_PREFIX)).forEach(out::add);
      } catch (java.io.UncheckedIOException e) {
        // A file deleted while walked: look again next time.
      }
    }
    return out;
  }
}
