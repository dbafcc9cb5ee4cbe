package io.gpudirect.bench;

import io.gpudirect.spark.shuffle.GpuDirectShuffleManager;
import io.gpudirect.spark.shuffle.StandaloneCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * One run of the shuffle bench's job with one shuffle manager, as a fresh application on a
 * {@link StandaloneCluster}: a join of two generated tables on a key, broadcasts off (a sort-merge
 * join, both sides shuffled), counted and checksummed. An application per run, since an
 * application holds one shuffle manager, and so fresh executors per run; each runs the job once at
 * a sixteenth of its size, untimed, so that neither side is timed with cold executors.
 */
final class SparkShuffle {
  /** Spark's own shuffle (Netty's block transfer service), and ours. */
  enum Manager {
    SPARK("sort"), GPUDIRECT(GpuDirectShuffleManager.class.getName());

    final String setting;

    Manager(String setting) {
      this.setting = setting;
    }
  }

  /**
   * What a timed job took: when it started, its wall time, the reducers' summed fetch wait, the
   * executor JVMs' CPU, the bytes the map tasks wrote.
   */
  record Run(Instant started, double seconds, double fetchWaitSeconds, double executorCpuSeconds, long shuffleBytes,
      String rows) {
    double cpuSecondsPerGb() {
      return shuffleBytes > 0 ? executorCpuSeconds / (shuffleBytes / 1e9) : Double.NaN;
    }
  }

  /**
   * Bytes shuffled per row of the larger table, about: its row (a long key and 64 hex characters
   * as Spark's unsafe row, lz4-compressed) and a quarter of the smaller table's.
   */
  private static final long BYTES_PER_ROW = 100;

  private SparkShuffle() {}

  /** The cluster and what the job is, for the report's method line. */
  static String describe(StandaloneCluster cluster, long bytes) {
    return String.format("%s, the driver in the bench's JVM, a fresh application per run; %,d rows joined to %,d on"
        + " a key, broadcasts off", cluster.describe(), rows(bytes), rows(bytes) / 4);
  }

  static Run run(StandaloneCluster cluster, Manager manager, long bytes) throws Exception {
    SparkSession spark = cluster.start(cluster.application("gpudirect bench shuffle")
        .config("spark.shuffle.manager", manager.setting)
        .config("spark.sql.shuffle.partitions", String.valueOf(2 * mapTasks(bytes)))
        // Spark's reducers read blocks of another executor on their host from its disk unless told
        // not to; the bench is of the network's shuffle, Netty's against ours (which ignores it).
        .config("spark.shuffle.readHostLocalDisk", "false"));
    try {
      spark.sparkContext().setLogLevel("WARN");
      job(spark, Math.max(1, rows(bytes) / 16), mapTasks(bytes));
      TaskTotals totals = new TaskTotals();
      spark.sparkContext().addSparkListener(totals);
      long cpu = executorCpuNanos(cluster);
      Instant started = Instant.now();
      long start = System.nanoTime();
      String rows = job(spark, rows(bytes), mapTasks(bytes));
      double seconds = (System.nanoTime() - start) / 1e9;
      double executorCpu = (executorCpuNanos(cluster) - cpu) / 1e9;
      spark.sparkContext().listenerBus().waitUntilEmpty(60_000);
      return new Run(started, seconds, totals.fetchWaitMs / 1e3, executorCpu, totals.bytesWritten, rows);
    } finally {
      spark.stop();
    }
  }

  private static long rows(long bytes) {
    return Math.max(1000, bytes / BYTES_PER_ROW);
  }

  /** About 128 MiB of shuffle output per map task. */
  private static int mapTasks(long bytes) {
    return (int) Math.max(4, Math.min(200, bytes / (128L << 20)));
  }

  /** The job; its one row (count and checksum) as text, which every run must give alike. */
  private static String job(SparkSession spark, long rows, int maps) {
    String payload = "concat(hex(xxhash64(id)), hex(xxhash64(id, 1)), hex(xxhash64(id, 2)), hex(xxhash64(id, 3)))";
    spark.range(0, rows, 1, maps).selectExpr("id % " + Math.max(1, rows / 4) + " AS k", payload + " AS v")
        .createOrReplaceTempView("facts");
    spark.range(0, Math.max(1, rows / 4), 1, maps).selectExpr("id AS k", payload + " AS w")
        .createOrReplaceTempView("dims");
    // bit_xor, not sum: a sum of hashes overflows a long, an error under Spark 4's ANSI default.
    List<Row> result = spark.sql("SELECT count(*), bit_xor(xxhash64(v, w)) FROM facts JOIN dims USING (k)").collectAsList();
    return result.get(0).toString();
  }

  /** CPU of the application's executor JVMs so far, their every thread and server included. */
  private static long executorCpuNanos(StandaloneCluster cluster) {
    return cluster.executorProcesses().stream()
        .mapToLong(p -> p.info().totalCpuDuration().map(Duration::toNanos).orElse(0L)).sum();
  }

  /** Sums over the tasks that end while it listens. */
  private static final class TaskTotals extends SparkListener {
    volatile long fetchWaitMs;
    volatile long bytesWritten;

    @Override
    public synchronized void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.taskMetrics() != null) {
        fetchWaitMs += end.taskMetrics().shuffleReadMetrics().fetchWaitTime();
        bytesWritten += end.taskMetrics().shuffleWriteMetrics().bytesWritten();
      }
    }
  }
}
