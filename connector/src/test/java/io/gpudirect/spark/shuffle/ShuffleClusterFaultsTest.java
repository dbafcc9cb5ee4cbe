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
import java.util.concurrent.Future;
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
 * Map outputs damaged on an executor's disk (deleted, truncated, a byte flipped) between the map
 * stage and a later read of its shuffle, out of reach behind a stalled executor, or lost with
 * their executor before or during the reduce stage, on a two-executor cluster with gpudirect's
 * shuffle manager: the reducers' fetches (remote, over the other executor's server, and local)
 * fail as Spark's fetch failures, never hang, Spark runs the lost map tasks again, and the job
 * gives every row, once. Spark's authentication is on, so the servers ask the secret each
 * executor derives from Spark's; the remote blocks are decoded ahead of their tasks, on two
 * threads of each executor ({@link DecodeAhead}).
 */
@org.junit.jupiter.api.Tag("spark35-line")
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ShuffleClusterFaultsTest {
  @TempDir static Path tmp;
  static ShuffleCluster cluster;
  static JavaSparkContext jsc;
  static List<Tuple2<Integer, Integer>> pairs;
  static final int STALL_TIMEOUT_S = 8;
  /** A stall the reducers outwait: well within {@link #STALL_TIMEOUT_S}. */
  static final int BRIEF_STALL_S = 4;

  @BeforeAll
  static void startCluster() throws Exception {
    // With Spark's authentication on, each executor derives the shuffle secret from Spark's.
    cluster = ShuffleCluster.start("gpudirect-shuffle-faults", ShuffleCluster.twoWorkers(tmp)
        .conf("spark.authenticate", "true")
        .conf("spark.authenticate.secret", "this-cluster's-spark-secret-" + System.nanoTime()), Map.of(
        // A stalled server fails its reducers' fetches after Spark's network timeout; the driver's
        // own expiry of a silent executor (after its heartbeat timeout) is kept out of the way.
        "spark.network.timeout", STALL_TIMEOUT_S + "s", "spark.executor.heartbeatInterval", "1s",
        "spark.storage.blockManagerHeartbeatTimeoutMs", "600s",
        // One block in flight per server: a reducer held after its first record still has blocks to fetch.
        "spark.reducer.maxBlocksInFlightPerAddress", "1",
        // Blocks decoded on the executors' threads ahead of their tasks, so that the damaged ones fail
        // there (ShuffleClusterFetchToDiskTest's damaged blocks decode on their tasks' threads).
        ExecutorShuffle.DECODE_THREADS, "2"));
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
    JavaPairRDD<Integer, Integer> rdd = jsc.parallelizePairs(pairs, 8).partitionBy(new HashPartitioner(6));
    assertEquals(pairs.size(), rdd.count());
    return rdd;
  }

  private static int shuffleId(JavaPairRDD<?, ?> rdd) {
    return ((ShuffleDependency<?, ?, ?>) rdd.rdd().dependencies().head()).shuffleId();
  }

  /** What a test does to one map output's data file on the executor's disk. */
  private interface Damage {
    void to(Path dataFile) throws IOException;
  }

  /**
   * A shuffle whose map stage has run, {@code damage} done to one executor's data files of it
   * (the other executor's left alone), then read again: every row comes back once, and the
   * damaged map outputs were fetch failures on the way.
   */
  private static void assertReadAgainAfter(Damage damage) throws Exception {
    JavaPairRDD<Integer, Integer> rdd = shuffled();
    Map<Path, List<Path>> byExecutor = cluster.dataFiles(shuffleId(rdd));
    assertFalse(byExecutor.isEmpty(), "shuffle data files under " + tmp);
    for (Path data : byExecutor.values().iterator().next()) {
      damage.to(data);
    }
    long failuresBefore = cluster.settled().fetchFailures.get();
    assertEveryRowOnce(rdd);
    assertTrue(cluster.settled().fetchFailures.get() > failuresBefore, "the damaged map outputs were fetch failures");
  }

  /** The rows of {@code rdd} read again, as Spark's retries give them: every pair once. */
  private static void assertEveryRowOnce(JavaPairRDD<Integer, Integer> rdd) {
    assertEveryRowOnce(rdd.collect());
  }

  private static void assertEveryRowOnce(List<Tuple2<Integer, Integer>> collected) {
    List<Tuple2<Integer, Integer>> rows = new ArrayList<>(collected);
    rows.sort((a, b) -> Integer.compare(a._2(), b._2()));
    assertEquals(pairs, rows);
  }

  @Test
  @Order(1)
  void deletedMapOutputsAreWrittenAgain() throws Exception {
    assertReadAgainAfter(Files::delete);
  }

  /**
   * Every block's bytes: one flipped in each tenth of the file. The server sends them as they are
   * (they are rotten on disk with the index intact), with Spark's checksums of the partitions,
   * which the reducers' fetches find them wrong against; the codec's framing finds them in the
   * blocks read locally.
   */
  @Test
  @Order(2)
  void corruptMapOutputsAreWrittenAgain() throws Exception {
    assertReadAgainAfter(data -> {
      try (FileChannel ch = FileChannel.open(data, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
        for (long at = ch.size() / 20; at < ch.size(); at += Math.max(1, ch.size() / 10)) {
          java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1);
          ch.read(b, at);
          b.put(0, (byte) (b.get(0) ^ 0x5a));
          b.rewind();
          ch.write(b, at);
        }
      }
    });
  }

  @Test
  @Order(3)
  void truncatedMapOutputsAreWrittenAgain() throws Exception {
    assertReadAgainAfter(data -> {
      try (FileChannel ch = FileChannel.open(data, StandardOpenOption.WRITE)) {
        ch.truncate(ch.size() / 2);
      }
    });
  }

  /**
   * One executor stopped with SIGSTOP after the map stage for less than Spark's network timeout:
   * the other executor's reducers wait for its server, then read on, with no fetch failed, and the
   * wait is counted in Spark's fetch wait time (which a quiet run sums to 0 ms: its blocks are in
   * before the tasks ask).
   */
  @Test
  @Order(4)
  void aBrieflyStalledServerIsWaitedForAndTheWaitCounted() throws Exception {
    JavaPairRDD<Integer, Integer> rdd = shuffled();
    ProcessHandle stalled = cluster.executorProcesses().get(0);
    long failuresBefore = cluster.settled().fetchFailures.get();
    long waitBefore = cluster.fetchWaitMs.get();
    signal("STOP", stalled);
    try {
      Future<List<Tuple2<Integer, Integer>>> rows = rdd.collectAsync();
      Thread.sleep(TimeUnit.SECONDS.toMillis(BRIEF_STALL_S));
      signal("CONT", stalled);
      assertEveryRowOnce(rows.get(120, TimeUnit.SECONDS));
    } finally {
      signal("CONT", stalled);
    }
    assertEquals(failuresBefore, cluster.settled().fetchFailures.get(), "fetch failures");
    long waited = cluster.fetchWaitMs.get() - waitBefore;
    // The live executor's first reduce task waits from its start until the server goes on: most of the stall.
    assertTrue(waited >= 1000, "the reducers' fetch wait, summed, counts the " + BRIEF_STALL_S + " s stall: " + waited + " ms");
  }

  /**
   * One executor stopped with SIGSTOP after the map stage: its server holds its connections
   * open and answers nothing. The other executor's reducers give up after Spark's network
   * timeout ({@code spark.network.timeout}), as fetch failures; once one is seen the executor is
   * let go on (SIGCONT), and every row comes back once.
   */
  @Test
  @Order(5)
  void aStalledServerFailsItsFetchesAfterSparksNetworkTimeout() throws Exception {
    JavaPairRDD<Integer, Integer> rdd = shuffled();
    ProcessHandle stalled = cluster.executorProcesses().get(0);
    long failuresBefore = cluster.settled().fetchFailures.get();
    signal("STOP", stalled);
    try {
      long start = System.nanoTime();
      Future<List<Tuple2<Integer, Integer>>> rows = rdd.collectAsync();
      while (cluster.fetchFailures.get() == failuresBefore) {
        // The timeout, and as long again for the job to start and the failure to reach the driver.
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2L * STALL_TIMEOUT_S),
            "no fetch from the stalled server failed within twice spark.network.timeout (" + STALL_TIMEOUT_S + " s)");
        assertFalse(rows.isDone(), "the job ended without a fetch failure");
        Thread.sleep(100);
      }
      signal("CONT", stalled);
      assertEveryRowOnce(rows.get(120, TimeUnit.SECONDS));
    } finally {
      signal("CONT", stalled);
    }
  }

  /**
   * One executor SIGKILLed (its server with it) while the reduce stage runs: each executor's
   * first reduce task holds after its first record until the kill is done, so the survivor's
   * task then fetches its remaining blocks (one in flight per server) from the dead server. Those
   * are fetch failures, the map outputs are written again, and every row comes back once.
   */
  @Test
  @Order(6)
  void anExecutorKilledInTheReduceStageLosesOnlyTime() throws Exception {
    cluster.awaitTwoExecutors();
    JavaPairRDD<Integer, Integer> rdd = shuffled();
    Path latch = Files.createDirectories(tmp.resolve("reduce-latch"));
    long failuresBefore = cluster.settled().fetchFailures.get();
    String dir = latch.toString();
    Future<List<Tuple2<Integer, Integer>>> rows = rdd.mapPartitions(it -> heldAfterFirstRecord(it, dir)).collectAsync();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    List<Long> heldIn;
    while ((heldIn = heldProcesses(latch)).size() < 2) {
      assertTrue(System.nanoTime() < deadline, "both executors' reduce tasks hold: " + heldIn);
      Thread.sleep(50);
    }
    killOneExecutor();
    Files.createFile(latch.resolve("go"));
    List<Tuple2<Integer, Integer>> all = new ArrayList<>(rows.get(120, TimeUnit.SECONDS));
    assertEveryRowOnce(all);
    assertTrue(cluster.settled().fetchFailures.get() > failuresBefore,
        "the survivor's fetches from the dead server were fetch failures");
  }

  /**
   * A reduce task's records, its first attempt held after the first record until {@code dir}
   * holds a file {@code go}; it says it holds with a file naming its process.
   */
  private static java.util.Iterator<Tuple2<Integer, Integer>> heldAfterFirstRecord(
      java.util.Iterator<Tuple2<Integer, Integer>> records, String dir) throws Exception {
    List<Tuple2<Integer, Integer>> out = new ArrayList<>();
    if (records.hasNext()) {
      out.add(records.next());
    }
    Path go = Path.of(dir, "go");
    if (!Files.exists(go)) {
      Files.writeString(Path.of(dir, "held-" + org.apache.spark.TaskContext.get().taskAttemptId()),
          String.valueOf(ProcessHandle.current().pid()));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
      while (!Files.exists(go) && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
    }
    records.forEachRemaining(out::add);
    return out.iterator();
  }

  /** The processes whose reduce tasks hold, as their files say. */
  private static List<Long> heldProcesses(Path latch) throws IOException {
    try (var files = Files.list(latch)) {
      return files.filter(f -> f.getFileName().toString().startsWith("held-")).map(f -> {
        try {
          return Long.parseLong(Files.readString(f).trim());
        } catch (IOException | NumberFormatException e) {
          return -1L;  // being written
        }
      }).filter(pid -> pid > 0).distinct().toList();
    }
  }

  /**
   * Last, as it leaves the cluster an executor short until its Worker starts another: one
   * executor SIGKILLed, its server with it, after the map stage. Whether a reducer's fetch from
   * the dead server (its connections refused, retries spent) or the driver's notice of the lost
   * executor comes first, its map outputs are written again and every row comes back once.
   */
  @Test
  @Order(7)
  void anExecutorKilledWithItsServerLosesOnlyTime() throws Exception {
    cluster.awaitTwoExecutors();
    JavaPairRDD<Integer, Integer> rdd = shuffled();
    long removedBefore = cluster.settled().executorsRemoved.get();
    killOneExecutor();
    assertEveryRowOnce(rdd);
    assertTrue(cluster.settled().executorsRemoved.get() > removedBefore, "the driver saw the executor go");
  }

  /** SIGKILL to one executor's JVM, its server with it; returns once it is gone. */
  private static void killOneExecutor() throws Exception {
    ProcessHandle victim = cluster.executorProcesses().get(0);
    assertTrue(victim.destroyForcibly());
    victim.onExit().get(30, TimeUnit.SECONDS);
  }

  private static void signal(String signal, ProcessHandle p) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(p.pid())).inheritIO().start();
    assertTrue(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + signal + " " + p.pid());
  }
}
