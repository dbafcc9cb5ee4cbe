package io.gpudirect.spark.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.spark.HashPartitioner;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * Dynamic allocation with Spark's shuffle tracking ({@code spark.dynamicAllocation.shuffleTracking.enabled},
 * which this manager asks for in place of the external shuffle service) on a two-executor cluster
 * whose executors may all go when idle: a shuffle's rows come back; idle for longer than the idle
 * timeout, the executors holding its map outputs (which only their own servers serve) are kept,
 * and the shuffle reads again with no fetch failed; past the shuffle tracking timeout, the idle
 * executors go.
 */
@org.junit.jupiter.api.Tag("spark35-line")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ShuffleClusterDynamicAllocationTest {
  private static final int IDLE_TIMEOUT_S = 3;
  /** How long an idle executor holding map outputs is kept: well past the test's wait of twice the idle timeout. */
  private static final int SHUFFLE_TIMEOUT_S = 10;

  @TempDir Path tmp;

  @Test
  void executorsHoldingMapOutputsAreKeptAndTheRowsComeBack() throws Exception {
    try (ShuffleCluster cluster = ShuffleCluster.start("gpudirect-shuffle-dynamic-allocation", tmp, Map.of(
        "spark.dynamicAllocation.enabled", "true",
        "spark.dynamicAllocation.shuffleTracking.enabled", "true",
        "spark.dynamicAllocation.initialExecutors", "2",
        "spark.dynamicAllocation.minExecutors", "0",
        "spark.dynamicAllocation.maxExecutors", "2",
        "spark.dynamicAllocation.executorIdleTimeout", IDLE_TIMEOUT_S + "s",
        "spark.dynamicAllocation.shuffleTracking.timeout", SHUFFLE_TIMEOUT_S + "s"))) {
      assertTrue(cluster.spark.sparkContext().executorAllocationManager().isDefined(), "dynamic allocation is on");
      JavaSparkContext jsc = JavaSparkContext.fromSparkContext(cluster.spark.sparkContext());
      bothExecutorsBusy(jsc);
      List<Tuple2<Integer, Integer>> pairs = IntStream.range(0, 20_000).mapToObj(i -> new Tuple2<>(i % 1000, i)).toList();
      JavaPairRDD<Integer, Integer> rdd = jsc.parallelizePairs(pairs, 8).partitionBy(new HashPartitioner(6));
      assertEquals(pairs, sorted(rdd.collect()));
      long removedBefore = cluster.settled().executorsRemoved.get();
      assertTrue(cluster.remoteBlocksFetched.get() > 0, "blocks fetched from the other executor");

      Thread.sleep(TimeUnit.SECONDS.toMillis(2L * IDLE_TIMEOUT_S));
      assertEquals(removedBefore, cluster.settled().executorsRemoved.get(), "executors holding map outputs kept while idle");
      assertEquals(pairs, sorted(rdd.collect()), "the shuffle read again");
      assertEquals(0, cluster.settled().fetchFailures.get(), "fetch failures");

      // Past the shuffle's timeout, idle executors go, their servers with them.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SHUFFLE_TIMEOUT_S + 30);
      while (cluster.settled().executorsRemoved.get() == removedBefore) {
        assertTrue(System.nanoTime() < deadline, "no idle executor removed past the shuffle tracking timeout");
        Thread.sleep(200);
      }
    }
  }

  /**
   * Returns once a job's tasks ran on two executors, so that both are busy just before the
   * shuffle: one idle since it registered may have gone already (no executor is kept at start),
   * and a job's backlog makes dynamic allocation ask for another.
   */
  private static void bothExecutorsBusy(JavaSparkContext jsc) {
    for (int attempt = 1; ; attempt++) {
      Set<String> ran = new HashSet<>(jsc.parallelize(IntStream.range(0, 16).boxed().toList(), 16).map(i -> {
        Thread.sleep(300);
        return SparkEnv.get().executorId();
      }).collect());
      if (ran.size() == 2) {
        return;
      }
      assertTrue(attempt < 6, "a job's tasks ran on two executors; they ran on " + ran);
    }
  }

  private static List<Tuple2<Integer, Integer>> sorted(List<Tuple2<Integer, Integer>> rows) {
    List<Tuple2<Integer, Integer>> out = new ArrayList<>(rows);
    out.sort((a, b) -> Integer.compare(a._2(), b._2()));
    return out;
  }
}
