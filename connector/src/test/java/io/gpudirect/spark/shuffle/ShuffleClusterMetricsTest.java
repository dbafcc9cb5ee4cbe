package io.gpudirect.spark.shuffle;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.sum;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.SparkEnv;
import org.apache.spark.executor.ShuffleReadMetrics;
import org.apache.spark.executor.ShuffleWriteMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AQEShuffleReadExec;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import org.apache.spark.sql.execution.adaptive.ShuffleQueryStageExec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import scala.collection.JavaConverters;

/**
 * Spark's shuffle metrics, as a {@code SparkListener} sees them at each task's end, are as true
 * with gpudirect's shuffle manager as with Spark's own shuffle, on the same two-executor cluster
 * and the same data: the blocks read are the non-empty blocks of the map statuses, their bytes
 * those Spark's own reducers read (the same writer, serializer and codec write the same blocks)
 * and the bytes and records the writers wrote, the fetch wait is counted, and AQE, planning from
 * the map statuses' sizes, coalesces into the same partitions.
 */
@Timeout(value = 360, unit = TimeUnit.SECONDS)
class ShuffleClusterMetricsTest {
  private static final int PARTITIONS = 8;

  @TempDir Path tmp;

  /** What one cluster's run of the queries reported. */
  record Figures(Totals totals, long nonEmptyBlocks, List<Long> rows, Totals aqeTotals, List<Long> aqeRows,
      List<List<Long>> aqeSizes, List<Integer> aqePartitions) {}

  /** Sums over the application's finished tasks. */
  static final class Totals extends SparkListener {
    long remoteBlocks;
    long localBlocks;
    long remoteBytes;
    long localBytes;
    long recordsRead;
    long fetchWaitMs;
    long remoteReqsMs;
    /** Tasks whose remote requests took longer than each lasting the whole task would: none should. */
    long reqsPastTheirTask;
    long bytesWritten;
    long recordsWritten;
    long runTimeMs;

    @Override
    public synchronized void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.taskMetrics() == null) {
        return;
      }
      ShuffleReadMetrics r = end.taskMetrics().shuffleReadMetrics();
      ShuffleWriteMetrics w = end.taskMetrics().shuffleWriteMetrics();
      remoteBlocks += r.remoteBlocksFetched();
      localBlocks += r.localBlocksFetched();
      remoteBytes += r.remoteBytesRead();
      localBytes += r.localBytesRead();
      recordsRead += r.recordsRead();
      fetchWaitMs += r.fetchWaitTime();
      remoteReqsMs += r.remoteReqsDuration();
      // Each request lies within its task's run, and a task has at most a request per remote block.
      if (r.remoteReqsDuration() > r.remoteBlocksFetched() * (end.taskMetrics().executorRunTime() + 1)) {
        reqsPastTheirTask++;
      }
      bytesWritten += w.bytesWritten();
      recordsWritten += w.recordsWritten();
      runTimeMs += end.taskMetrics().executorRunTime();
    }

    @Override
    public synchronized String toString() {
      return String.format("blocks %d remote + %d local, bytes %d remote + %d local, records read %d, fetch wait"
          + " %d ms, remote requests %d ms (%d tasks past their time; tasks ran %d ms); written %d bytes, %d records",
          remoteBlocks, localBlocks, remoteBytes, localBytes, recordsRead, fetchWaitMs, remoteReqsMs, reqsPastTheirTask,
          runTimeMs, bytesWritten, recordsWritten);
    }
  }

  private static Dataset<Row> facts(SparkSession spark) {
    return spark.range(0, 600_000, 1, 4).selectExpr("id", "id % 5000 as k",
        "concat('row-', cast(id * 7919 % 100003 as string), '-', repeat('x', cast(id % 40 as int))) as s");
  }

  /** A full outer join with broadcasts off and a group-by (three shuffles, every block read once, AQE off), then AQE on. */
  private static Figures run(ShuffleCluster cluster) throws Exception {
    SparkSession spark = cluster.spark;
    Totals totals = new Totals();
    spark.sparkContext().addSparkListener(totals);
    spark.conf().set("spark.sql.adaptive.enabled", false);
    Dataset<Row> dims = spark.range(0, 5000, 1, 3).selectExpr("id as dk", "concat('name-', id % 700) as name");
    // A full outer join reads both sides to their end (an inner one may leave a side's last blocks
    // unread, and Spark merges a reader's metrics into the task's only once it is read through).
    List<Long> rows = facts(spark).join(dims, col("k").equalTo(col("dk")), "full_outer").groupBy("name").agg(sum("id"), count("s"), sum("k"))
        .collectAsList().stream().map(r -> r.getLong(1) * 31 + r.getLong(2) + r.getLong(3)).sorted().toList();
    cluster.settled();
    spark.sparkContext().removeSparkListener(totals);
    long nonEmpty = nonEmptyBlocks();

    // AQE plans its coalescing from the map statuses' sizes: the same sizes make the same partitions.
    spark.conf().set("spark.sql.adaptive.enabled", true);
    spark.conf().set("spark.sql.adaptive.coalescePartitions.enabled", true);
    spark.conf().set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "256k");
    spark.conf().set("spark.sql.shuffle.partitions", "40");
    Totals aqeTotals = new Totals();
    spark.sparkContext().addSparkListener(aqeTotals);
    Dataset<Row> q = facts(spark).groupBy("k").agg(count("*"), sum("id"));
    List<Long> aqeRows = q.collectAsList().stream().map(r -> r.getLong(0) * 1_000_003 + r.getLong(1) * 31
        + r.getLong(2)).sorted().toList();
    cluster.settled();
    List<List<Long>> sizes = new ArrayList<>();
    List<Integer> partitions = new ArrayList<>();
    walk(q.queryExecution().executedPlan(), sizes, partitions);
    return new Figures(totals, nonEmpty, rows, aqeTotals, aqeRows, sizes, partitions);
  }

  /** Non-empty blocks of every shuffle the driver's map output tracker knows (each read once above). */
  private static long nonEmptyBlocks() {
    MapOutputTrackerMaster tracker = (MapOutputTrackerMaster) SparkEnv.get().mapOutputTracker();
    long n = 0;
    for (Object id : JavaConverters.asJavaCollection(tracker.shuffleStatuses().keys())) {
      n += MapOutputBlock.of(tracker.getMapSizesByExecutorId((Integer) id, 0, Integer.MAX_VALUE, 0, PARTITIONS),
          false).size();
    }
    return n;
  }

  private static void walk(SparkPlan plan, List<List<Long>> sizes, List<Integer> partitions) {
    if (plan instanceof AdaptiveSparkPlanExec a) {
      walk(a.executedPlan(), sizes, partitions);
      return;
    }
    if (plan instanceof AQEShuffleReadExec read) {
      partitions.add(read.partitionSpecs().size());
    }
    // A query stage is a leaf whose plan is its own (Spark 4 wraps the final stage in one too).
    if (plan instanceof QueryStageExec stage) {
      if (stage instanceof ShuffleQueryStageExec shuffle && shuffle.mapStats().isDefined()) {
        List<Long> bytes = new ArrayList<>();
        for (long b : shuffle.mapStats().get().bytesByPartitionId()) {
          bytes.add(b);
        }
        sizes.add(bytes);
      }
      walk(stage.plan(), sizes, partitions);
      return;
    }
    for (SparkPlan child : JavaConverters.seqAsJavaList(plan.children())) {
      walk(child, sizes, partitions);
    }
  }

  private static Figures runOn(StandaloneCluster on, String name, Map<String, String> conf) throws Exception {
    try (ShuffleCluster cluster = ShuffleCluster.on(on, name, conf)) {
      return run(cluster);
    }
  }

  @Test
  void readAndWriteMetricsAreThoseOfSparksOwnShuffle() throws Exception {
    Figures spark;
    Figures ours;
    Figures threaded;
    String logs;
    try (StandaloneCluster cluster = ShuffleCluster.twoWorkers(tmp).start()) {
      // Spark's reducers read the blocks of another executor on their host from its disk unless told
      // not to; here, as ours, they fetch them over the network (its Netty block transfer service).
      spark = runOn(cluster, "shuffle-metrics-spark",
          Map.of("spark.shuffle.manager", "sort", "spark.shuffle.readHostLocalDisk", "false"));
      ours = runOn(cluster, "shuffle-metrics-gpudirect", Map.of());
      threaded = runOn(cluster, "shuffle-metrics-threaded", Map.of(ExecutorShuffle.WRITE_THREADS, "3"));
      logs = cluster.executorLogs();
    }
    // The writer threads write the blocks Spark's writer writes, byte for byte, and the same metrics.
    assertTrue(logs.contains("writes map tasks' partitions on 3 threads"), "the threaded writer ran");
    String threads = "\n  threaded: " + threaded.totals + "\n  Spark's:  " + spark.totals;
    assertEquals(spark.rows, threaded.rows, "rows, threaded writer");
    assertEquals(spark.totals.bytesWritten, threaded.totals.bytesWritten, "bytes written, threaded writer" + threads);
    assertEquals(spark.totals.recordsWritten, threaded.totals.recordsWritten, "records written, threaded writer" + threads);
    assertEquals(spark.totals.remoteBytes + spark.totals.localBytes,
        threaded.totals.remoteBytes + threaded.totals.localBytes, "bytes read, threaded writer" + threads);
    assertEquals(spark.aqeRows, threaded.aqeRows, "rows with AQE, threaded writer");
    assertEquals(spark.aqeSizes, threaded.aqeSizes, "AQE's map output statistics, threaded writer");
    Totals s = spark.totals;
    Totals o = ours.totals;
    String both = "\n  gpudirect: " + o + "\n  Spark's:   " + s;
    System.out.println("Shuffle metrics, AQE off:" + both + "\nAQE on:\n  gpudirect: " + ours.aqeTotals
        + "\n  Spark's:   " + spark.aqeTotals + "\n  partitions " + ours.aqePartitions + ", Spark's " + spark.aqePartitions);

    assertEquals(spark.rows, ours.rows, "rows");
    assertTrue(o.remoteBlocks > 0 && o.localBlocks > 0 && s.remoteBlocks > 0, "blocks read both ways" + both);
    assertEquals(ours.nonEmptyBlocks, o.remoteBlocks + o.localBlocks, "blocks read = non-empty blocks" + both);
    assertEquals(s.remoteBlocks + s.localBlocks, o.remoteBlocks + o.localBlocks, "blocks read" + both);
    // The same writer, serializer and codec over the same rows write the same blocks.
    assertEquals(s.remoteBytes + s.localBytes, o.remoteBytes + o.localBytes, "bytes read" + both);
    assertEquals(o.bytesWritten, o.remoteBytes + o.localBytes, "bytes read = bytes written" + both);
    assertEquals(s.bytesWritten, o.bytesWritten, "bytes written" + both);
    assertEquals(o.recordsWritten, o.recordsRead, "records read = records written" + both);
    assertEquals(s.recordsRead, o.recordsRead, "records read" + both);
    // Counted in whole milliseconds per block, as Spark counts its own: on a quiet machine the blocks
    // are in before the tasks ask and every wait rounds to 0 (seen in CI), so only its bound is sure
    // here; ShuffleClusterFaultsTest shows a stalled server's wait counted.
    assertTrue(o.fetchWaitMs >= 0 && o.fetchWaitMs <= o.runTimeMs, "fetch wait within the tasks' time" + both);
    // Spark 3.4's "remote requests duration": the time of each remote request, from its sending to
    // its last block in, summed; ours has one request per block. Requests overlap, so the sum is not
    // bounded by the tasks' time, only each request by its task's.
    assertTrue(o.remoteReqsMs > 0, "remote requests' time counted" + both);
    assertEquals(0, o.reqsPastTheirTask, "every request within its task's time" + both);

    assertTrue(!ours.aqeSizes.isEmpty() && !ours.aqePartitions.isEmpty(), "AQE read a shuffle: " + ours.aqeSizes + ", " + ours.aqePartitions);
    assertEquals(spark.aqeRows, ours.aqeRows, "rows with AQE");
    // AQE's coalesced reads fetch each map output's consecutive blocks as one, as Spark's do.
    Totals sa = spark.aqeTotals;
    Totals oa = ours.aqeTotals;
    String aqe = "\n  gpudirect: " + oa + "\n  Spark's:   " + sa;
    assertEquals(sa.remoteBlocks + sa.localBlocks, oa.remoteBlocks + oa.localBlocks, "blocks read with AQE" + aqe);
    assertEquals(sa.remoteBytes + sa.localBytes, oa.remoteBytes + oa.localBytes, "bytes read with AQE" + aqe);
    assertEquals(oa.bytesWritten, oa.remoteBytes + oa.localBytes, "bytes read = written with AQE" + aqe);
    assertEquals(oa.recordsWritten, oa.recordsRead, "records read = written with AQE" + aqe);
    assertTrue(oa.remoteBlocks == 0 || oa.remoteReqsMs > 0, "remote requests' time counted with AQE" + aqe);
    assertEquals(0, oa.reqsPastTheirTask, "every request within its task's time with AQE" + aqe);
    assertEquals(spark.aqeSizes, ours.aqeSizes, "AQE's map output statistics");
    assertEquals(spark.aqePartitions, ours.aqePartitions, "AQE's coalesced partitions");
    assertTrue(ours.aqePartitions.get(0) < 40, "AQE coalesced: " + ours.aqePartitions);
  }
}
