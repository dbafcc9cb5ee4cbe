package io.gpudirect.spark.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.spark.HashPartitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
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
 * Map outputs damaged on an executor's disk between the map stage and a later read of its
 * shuffle, or lost with their executor, on a two-executor cluster with gpudirect's shuffle manager: the reducers' fetches
 * (remote, over the other executor's server, and local) fail as Spark's fetch failures, Spark
 * runs the lost map tasks again, and the job gives every row, once. Spark's authentication is on,
 * so the servers ask the secret each executor derives from Spark's.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ShuffleClusterFaultsTest {
  @TempDir static Path tmp;
  static ShuffleCluster cluster;
  static JavaSparkContext jsc;
  static List<Tuple2<Integer, Integer>> pairs;

  @BeforeAll
  static void startCluster() throws Exception {
    // With Spark's authentication on, each executor derives the shuffle secret from Spark's.
    cluster = ShuffleCluster.start("gpudirect-shuffle-faults", tmp, Map.of("spark.authenticate", "true",
        "spark.authenticate.secret", "this-cluster's-spark-secret-" + System.nanoTime()));
    jsc = JavaSparkContext.fromSparkContext(cluster.spark.sparkContext());
    pairs = IntStream.range(0, 20_000).mapToObj(i -> new Tuple2<>(i % 1000, i)).toList();
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** A shuffle whose map stage has run, so that a second read of it reads the map outputs on disk. */
  private static JavaPairRDD<Integer, Integer> shuffled() {
    JavaPairRDD<Integer, Integer> rdd = jsc.parallelizePairs(pairs, 4).partitionBy(new HashPartitioner(6));
    assertEquals(pairs.size(), rdd.count());
    return rdd;
  }

  private static int shuffleId(JavaPairRDD<?, ?> rdd) {
    return ((ShuffleDependency<?, ?, ?>) rdd.rdd().dependencies().head()).shuffleId();
  }

  /** One executor's data files of the shuffle of {@code rdd}, the other executor's left alone. */
  private static List<Path> oneExecutorsDataFiles(JavaPairRDD<?, ?> rdd) throws IOException {
    Map<Path, List<Path>> byExecutor = ShuffleCluster.dataFiles(tmp, shuffleId(rdd));
    assertFalse(byExecutor.isEmpty(), "shuffle data files under " + tmp);
    return byExecutor.values().iterator().next();
  }

  /** The rows of {@code rdd} read again, as Spark's retries give them: every pair once. */
  private static void assertEveryRowOnce(JavaPairRDD<Integer, Integer> rdd) {
    List<Tuple2<Integer, Integer>> rows = new ArrayList<>(rdd.collect());
    rows.sort((a, b) -> Integer.compare(a._2(), b._2()));
    assertEquals(pairs, rows);
  }

  /** As above, and the damaged map outputs were fetch failures on the way. */
  private static void assertReadAgainAfterFetchFailures(JavaPairRDD<Integer, Integer> rdd) throws Exception {
    long failuresBefore = cluster.settled().fetchFailures.get();
    assertEveryRowOnce(rdd);
    assertTrue(cluster.settled().fetchFailures.get() > failuresBefore, "the damaged map outputs were fetch failures");
  }

  @Test
  @Order(1)
  void deletedMapOutputsAreWrittenAgain() throws Exception {
    JavaPairRDD<Integer, Integer> rdd = shuffled();
    for (Path data : oneExecutorsDataFiles(rdd)) {
      Files.delete(data);
    }
    assertReadAgainAfterFetchFailures(rdd);
  }

  @Test
  @Order(2)
  void corruptMapOutputsAreWrittenAgain() throws Exception {
    JavaPairRDD<Integer, Integer> rdd = shuffled();
    for (Path data : oneExecutorsDataFiles(rdd)) {
      // Every block's bytes: one flipped in each tenth of the file. The server sends them as they
      // are (they are rotten on disk with the index intact); the codec's checksum finds them.
      try (FileChannel ch = FileChannel.open(data, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
        for (long at = ch.size() / 20; at < ch.size(); at += Math.max(1, ch.size() / 10)) {
          java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1);
          ch.read(b, at);
          b.put(0, (byte) (b.get(0) ^ 0x5a));
          b.rewind();
          ch.write(b, at);
        }
      }
    }
    assertReadAgainAfterFetchFailures(rdd);
  }

  /**
   * Last, as it leaves the cluster an executor short until its Worker starts another: one
   * executor SIGKILLed, its server with it, after the map stage. Whether a reducer's fetch from
   * the dead server (its connections refused, retries spent) or the driver's notice of the lost
   * executor comes first, its map outputs are written again and every row comes back once.
   */
  @Test
  @Order(3)
  void anExecutorKilledWithItsServerLosesOnlyTime() throws Exception {
    JavaPairRDD<Integer, Integer> rdd = shuffled();
    // The Workers run in this JVM, so their executors are its children.
    ProcessHandle executor = ProcessHandle.current().children()
        .filter(p -> commandLine(p).contains("CoarseGrainedExecutorBackend"))
        .findFirst().orElseThrow(() -> new AssertionError("no executor JVM among this JVM's children"));
    long removedBefore = cluster.settled().executorsRemoved.get();
    assertTrue(executor.destroyForcibly());
    executor.onExit().get(30, TimeUnit.SECONDS);
    assertEveryRowOnce(rdd);
    assertTrue(cluster.settled().executorsRemoved.get() > removedBefore, "the driver saw the executor go");
  }

  /** A process's command line, from /proc: {@code ProcessHandle.Info} leaves out a long one. */
  private static String commandLine(ProcessHandle p) {
    try {
      return new String(Files.readAllBytes(Path.of("/proc", String.valueOf(p.pid()), "cmdline")),
          java.nio.charset.StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }
}
