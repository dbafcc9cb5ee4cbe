package io.gpudirect.spark.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.gpu.GpuTest;
import io.gpudirect.spark.RapidsJar;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The RAPIDS Accelerator's columnar shuffle over gpudirect's shuffle manager (issue 29): with the
 * plugin on both executors of a two-Worker cluster, its exchanges write GPU batches through its
 * own serializer into Spark's sort-based writer, which ours delegates to, and ours fetches them
 * from the other executor; the queries of {@link ShuffleClusterQueriesTest} give the rows Spark's
 * CPU engine gives with its own shuffle, written by Spark's writer and by our threaded one.
 *
 * <p>Needs a GPU and the rapids-4-spark jar on the class path (executors get the driver's);
 * skipped otherwise. The two executors share the one GPU, a third of its memory each.
 */
@GpuTest(cudf = false)
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class RapidsShuffleGpuTest {
  /** The plugin on every executor, sized so that two share one GPU. */
  static final Map<String, String> RAPIDS = Map.of(
      "spark.plugins", RapidsJar.PLUGIN,
      "spark.rapids.sql.enabled", "true",
      "spark.rapids.memory.gpu.allocFraction", "0.3",
      "spark.rapids.memory.gpu.minAllocFraction", "0",
      "spark.rapids.memory.pinnedPool.size", "0",
      "spark.rapids.sql.explain", "NOT_ON_GPU");

  @TempDir Path tmp;

  @Test
  void theGpuSerializersBatchesCrossOurShuffleAndGiveSparksRows() throws Exception {
    RapidsJar.assumeOnClassPath();
    Map<String, List<String>> expected = ShuffleClusterQueriesTest.rowsOfSparksOwnShuffle();
    Map<String, String> conf = new java.util.HashMap<>(RAPIDS);
    conf.put(ExecutorShuffle.WRITE_THREADS, "0");  // Spark's own writer, not the default with the plugin
    try (ShuffleCluster cluster = ShuffleCluster.start("gpudirect-shuffle-rapids", tmp, conf)) {
      ShuffleClusterQueriesTest.assertSameRows(expected, cluster);
      // Without this the test would pass with the plugin silently off: the exchange must be the
      // plugin's, its batches what crossed.
      cluster.spark.conf().set("spark.sql.adaptive.enabled", false);
      String plan = cluster.spark.range(0, 1000, 1, 2).selectExpr("id % 10 AS k", "id").groupBy("k").count()
          .queryExecution().executedPlan().toString();
      assertTrue(plan.contains("GpuColumnarExchange"), "the plugin's exchange planned:\n" + plan);
      assertEquals(Set.of("tcp"), cluster.bytesFetchedByTransport().keySet(), "transport=auto, no RDMA here");
    }
  }

  /**
   * The threaded writer, the default with the plugin: each executor's writer threads serialize the
   * plugin's host batches from references of their own ({@link RetainedBatch}) while the tasks
   * move on, and the rows are Spark's. Without the reference, the plugin frees a batch the
   * threads are still reading (wrong rows or a crash in native code, which fails the job).
   */
  @Test
  void thePluginsBatchesSerializedOnTheWriterThreadsGiveSparksRows() throws Exception {
    RapidsJar.assumeOnClassPath();
    Map<String, List<String>> expected = ShuffleClusterQueriesTest.rowsOfSparksOwnShuffle();
    try (ShuffleCluster cluster = ShuffleCluster.start("gpudirect-shuffle-rapids-threaded", tmp, RAPIDS)) {
      ShuffleClusterQueriesTest.assertSameRows(expected, cluster);
      Map<String, Long> retained = cluster.onEachExecutor(GpuDirectShuffleManager::retainedRecords);
      assertTrue(retained.values().stream().allMatch(n -> n > 0),
          "every executor's writer threads serialized retained batches: " + retained);
    }
  }

  /**
   * A map task that fails part-way, its earlier batches handed to the writer threads: the job
   * fails with the query's own error, every reference the threads took is given back on both
   * executors (a reference kept is the plugin's host memory lost for the executor's life), and the
   * next jobs' rows are Spark's.
   */
  @Test
  void aMapTaskFailingPartWayLeavesNoBatchHeld() throws Exception {
    RapidsJar.assumeOnClassPath();
    Map<String, List<String>> expected = ShuffleClusterQueriesTest.rowsOfSparksOwnShuffle();
    try (ShuffleCluster cluster = ShuffleCluster.start("gpudirect-shuffle-rapids-failing", tmp, RAPIDS)) {
      // Batches of 1 MiB: each map task hands its writer threads several before the last row fails.
      cluster.spark.conf().set("spark.rapids.sql.batchSizeBytes", "1m");
      long rows = 4_000_000;
      long before = retainedRecords(cluster);
      Exception failed = assertThrows(Exception.class, () -> cluster.spark.range(0, rows, 1, 4)
          .selectExpr("id % 1000 AS k", "CASE WHEN id = " + (rows - 1) + " THEN raise_error('the map side fails here')"
              + " ELSE id END AS v")
          .repartition(16, org.apache.spark.sql.functions.col("k")).selectExpr("sum(v)").collectAsList());
      assertTrue(String.valueOf(failed.getMessage()).contains("the map side fails here"), failed.toString());
      long after = retainedRecords(cluster);
      assertTrue(after > before, "the failing job's batches went to the writer threads: " + before + " then " + after);
      // Tasks killed with the stage end on their own time; the references must be back soon after.
      Map<String, Long> held = cluster.onEachExecutor(GpuDirectShuffleManager::retainedBatchesHeld);
      for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
          held.values().stream().anyMatch(n -> n != 0) && System.nanoTime() < deadline; Thread.sleep(500)) {
        held = cluster.onEachExecutor(GpuDirectShuffleManager::retainedBatchesHeld);
      }
      assertEquals(Set.of(0L), Set.copyOf(held.values()), "batches still held by executor: " + held);
      cluster.spark.conf().unset("spark.rapids.sql.batchSizeBytes");
      ShuffleClusterQueriesTest.assertSameRows(expected, cluster);
    }
  }

  /** Records both executors' writer threads serialized from retained batches so far. */
  private static long retainedRecords(ShuffleCluster cluster) {
    return cluster.onEachExecutor(GpuDirectShuffleManager::retainedRecords).values().stream()
        .mapToLong(Long::longValue).sum();
  }
}
