package io.gpudirect.bench;

import io.gpudirect.spark.shuffle.GpuDirectShuffleManager;
import io.gpudirect.spark.shuffle.LocalCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * One run of the shuffle bench's job on a fresh two-executor {@link LocalCluster} with one shuffle
 * manager: a join of two generated tables on a key, broadcasts off (a sort-merge join, both sides
 * shuffled), counted and checksummed. A cluster per run, since a JVM holds one
 * {@code SparkContext} and a context one shuffle manager; each runs the job once at a sixteenth
 * of its size, untimed, so that neither side is timed with cold executors.
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

  /** What a timed job took: wall time, the reducers' summed fetch wait, the executor JVMs' CPU, the bytes the map tasks wrote. */
  record Run(double seconds, double fetchWaitSeconds, double executorCpuSeconds, long shuffleBytes, String rows) {
    double cpuSecondsPerGb() {
      return shuffleBytes > 0 ? executorCpuSeconds / (shuffleBytes / 1e9) : Double.NaN;
    }
  }

  /**
   * Bytes shuffled per row of the larger table, about: its row (a long key and 64 hex characters
   * as Spark's unsafe row, lz4-compressed) and a quarter of the smaller table's.
   */
  private static final long BYTES_PER_ROW = 100;
  private static final int EXECUTOR_MEMORY_MB = 2048;

  private SparkShuffle() {}

  /** Executor memory and what the job is, for the report's method line. */
  static String describe(long bytes) {
    return String.format("local-cluster[2,1,%d] (a Master, two Workers and the driver in this JVM, one executor JVM"
        + " per Worker), a fresh cluster per run; %,d rows joined to %,d on a key, broadcasts off", EXECUTOR_MEMORY_MB,
        rows(bytes), rows(bytes) / 4);
  }

  static Run run(Manager manager, Path dir, long bytes) throws Exception {
    SparkSession spark = LocalCluster.builder("gpudirect bench shuffle", dir, 2, EXECUTOR_MEMORY_MB)
        .config("spark.shuffle.manager", manager.setting)
        .config("spark.sql.shuffle.partitions", String.valueOf(2 * mapTasks(bytes)))
        // Spark's reducers read blocks of another executor on their host from its disk unless told
        // not to; the bench is of the network's shuffle, Netty's against ours (which ignores it).
        .config("spark.shuffle.readHostLocalDisk", "false")
        .getOrCreate();
    try {
      spark.sparkContext().setLogLevel("WARN");
      LocalCluster.awaitExecutors(spark, 2, dir, 120);
      job(spark, Math.max(1, rows(bytes) / 16), mapTasks(bytes));
      TaskTotals totals = new TaskTotals();
      spark.sparkContext().addSparkListener(totals);
      long cpu = executorCpuNanos();
      long start = System.nanoTime();
      String rows = job(spark, rows(bytes), mapTasks(bytes));
      double seconds = (System.nanoTime() - start) / 1e9;
      double executorCpu = (executorCpuNanos() - cpu) / 1e9;
      spark.sparkContext().listenerBus().waitUntilEmpty(60_000);
      return new Run(seconds, totals.fetchWaitMs / 1e3, executorCpu, totals.bytesWritten, rows);
    } finally {
      spark.stop();
      LocalCluster.forget();
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

  /** CPU of this JVM's child processes (the Workers' executor JVMs) so far, their every thread and server included. */
  private static long executorCpuNanos() {
    return ProcessHandle.current().descendants()
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
