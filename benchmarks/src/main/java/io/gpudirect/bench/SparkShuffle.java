package io.gpudirect.bench;

import io.gpudirect.spark.shuffle.GpuDirectShuffleManager;
import io.gpudirect.spark.shuffle.StandaloneCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;

/**
 * One run of the shuffle bench's job with one shuffle manager, as a fresh application on a
 * {@link StandaloneCluster}: a join of two generated tables on a key, broadcasts off (a sort-merge
 * join, both sides shuffled), counted and checksummed. An application per run, since an
 * application holds one shuffle manager, and so fresh executors per run; each runs the job once at
 * a sixteenth of its size, untimed, so that neither side is timed with cold executors.
 */
final class SparkShuffle {
  /**
   * A shuffle manager the bench runs the job with: its short name (the timeline's), how the report
   * names it, and the settings that choose it.
   */
  record Manager(String key, String label, Map<String, String> settings) {
    /** Spark's own (sort-based, Netty's block transfer service). */
    static final Manager SPARK = new Manager("spark", "Spark's Netty shuffle", Map.of("spark.shuffle.manager", "sort"));
    /**
     * Spark's own, its reducers reading the other executor's blocks from that executor's disk, as
     * Spark does by default on one host: no network at all, so its job time is the least that any
     * transport could give on this host (the bound of the bench's time goal).
     */
    static final Manager SPARK_DISK = new Manager("spark-disk", "Spark's shuffle reading the disk (no network)",
        Map.of("spark.shuffle.manager", "sort", "spark.shuffle.readHostLocalDisk", "true"));
    /** Ours. */
    static final Manager GPUDIRECT = new Manager("gpudirect", "gpudirect shuffle",
        Map.of("spark.shuffle.manager", GpuDirectShuffleManager.class.getName()));

    /** Ours with {@code settings} of its own (spark.gpudirect.shuffle.*), a side of its own. */
    static Manager gpudirectWith(Map<String, String> settings) {
      Map<String, String> own = new java.util.TreeMap<>(settings);
      Map<String, String> all = new java.util.TreeMap<>(own);
      all.putAll(GPUDIRECT.settings());
      return new Manager("gpudirect-variant", "gpudirect shuffle with " + own, all);
    }

    /**
     * The RAPIDS Accelerator's own shuffle manager in its MULTITHREADED mode (its class is named
     * for the Spark version, e.g. com.nvidia.spark.rapids.spark353.RapidsShuffleManager).
     */
    static Manager rapidsMultithreaded(String managerClass) {
      return new Manager("rapids", "RAPIDS shuffle (MULTITHREADED)",
          Map.of("spark.shuffle.manager", managerClass, "spark.rapids.shuffle.mode", "MULTITHREADED"));
    }
  }

  /**
   * What a timed job took: when it started, its wall time, the reducers' summed fetch wait, the
   * executor JVMs' CPU, the bytes the map tasks wrote, its answer; and its two phases: from the
   * start until the last stage that only wrote shuffle output ended (the map side: generating,
   * serializing, writing), and the wall time of the stages that read shuffle output (fetching,
   * deserializing, then joining or aggregating).
   */
  record Run(Instant started, double seconds, double fetchWaitSeconds, double executorCpuSeconds, long shuffleBytes,
      String rows, double mapSeconds, double reduceSeconds, Tasks mapTasks, Tasks reduceTasks) {
    double cpuSecondsPerGb() {
      return shuffleBytes > 0 ? executorCpuSeconds / (shuffleBytes / 1e9) : Double.NaN;
    }
  }

  /**
   * Where the tasks of one phase spent their time, summed: the map tasks (those that only wrote
   * shuffle output) or the reduce tasks (those that read it): their run time, the CPU of the task's
   * own thread within it (not of threads it hands work to, such as a threaded writer's or a
   * multithreaded reader's), the collector's pauses, and the shuffle's own time: Spark's shuffle
   * write time for the map tasks (the writer's disk writes and commits, not its serializing), the
   * fetch wait for the reduce tasks. Two shuffles whose phases differ say here whether the task's
   * thread or something it waits for took the time.
   */
  record Tasks(double runSeconds, double cpuSeconds, double gcSeconds, double shuffleSeconds) {}

  /**
   * Bytes shuffled per row of the larger table, about: its row (a long key and four longs' decimal
   * digits, some 76 characters, as Spark's unsafe row, lz4-compressed) and a quarter of the smaller
   * table's.
   */
  private static final long BYTES_PER_ROW = 100;

  /** What the bench's job does with its generated rows (--shuffle-job). */
  enum Job {
    /** Joined to a quarter as many on a key, broadcasts off: both tables shuffled. */
    join,
    /**
     * Hash-repartitioned on the key and checksummed: one table shuffled, the least work around
     * the shuffle, so that its transport shows most in the job's time.
     */
    repartition
  }

  private SparkShuffle() {}

  /** The cluster and what the job is, for the report's method line. */
  static String describe(StandaloneCluster cluster, Job job, long bytes) {
    return String.format("%s, the driver in the bench's JVM, a fresh application per run; %s", cluster.describe(),
        job == Job.join ? String.format("%,d rows joined to %,d on a key, broadcasts off", rows(bytes), rows(bytes) / 4)
            : String.format("%,d rows repartitioned on a key", rows(bytes)));
  }

  /**
   * Runs the job once untimed at a sixteenth of its size, then timed, with {@code manager} and the
   * settings {@code conf} adds for every manager (e.g. the RAPIDS Accelerator's).
   */
  static Run run(StandaloneCluster cluster, Manager manager, Map<String, String> conf, Job job, long bytes)
      throws Exception {
    SparkSession.Builder application = cluster.application("gpudirect bench shuffle")
        .config("spark.sql.shuffle.partitions", String.valueOf(2 * mapTasks(bytes)))
        // Spark's reducers read blocks of another executor on their host from its disk unless told
        // not to; the bench is of the network's shuffle, Netty's against ours (which ignores it).
        .config("spark.shuffle.readHostLocalDisk", "false");
    conf.forEach(application::config);
    // After the settings for every side: a manager's own (SPARK_DISK's readHostLocalDisk) win.
    manager.settings().forEach(application::config);
    SparkSession spark = cluster.start(application);
    try {
      spark.sparkContext().setLogLevel("WARN");
      job(spark, job, Math.max(1, rows(bytes) / 16), mapTasks(bytes));
      TaskTotals totals = new TaskTotals();
      spark.sparkContext().addSparkListener(totals);
      long cpu = executorCpuNanos(cluster);
      Instant started = Instant.now();
      long start = System.nanoTime();
      String rows = job(spark, job, rows(bytes), mapTasks(bytes));
      double seconds = (System.nanoTime() - start) / 1e9;
      double executorCpu = (executorCpuNanos(cluster) - cpu) / 1e9;
      spark.sparkContext().listenerBus().waitUntilEmpty(60_000);
      return new Run(started, seconds, totals.fetchWaitMs / 1e3, executorCpu, totals.bytesWritten, rows,
          Math.max(0, totals.lastMapStageEndMs - started.toEpochMilli()) / 1e3, totals.reduceStagesMs / 1e3,
          totals.map.tasks(), totals.reduce.tasks());
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
  private static String job(SparkSession spark, Job job, long rows, int maps) {
    // Expressions the RAPIDS Accelerator runs on the GPU too (it has no hex and no bit_xor), so
    // that with it on the whole job, exchanges included, is its.
    String payload = "concat(cast(xxhash64(id) AS string), cast(xxhash64(id, 1) AS string),"
        + " cast(xxhash64(id, 2) AS string), cast(xxhash64(id, 3) AS string))";
    Dataset<Row> facts = spark.range(0, rows, 1, maps).selectExpr("id % " + Math.max(1, rows / 4) + " AS k",
        payload + " AS v");
    // Each hash's low 32 bits: a sum of whole hashes overflows a long, an error under Spark 4's ANSI default.
    Dataset<Row> result;
    if (job == Job.join) {
      Dataset<Row> dims = spark.range(0, Math.max(1, rows / 4), 1, maps).selectExpr("id AS k", payload + " AS w");
      result = facts.join(dims, "k").selectExpr("count(*)", "sum(xxhash64(v, w) & 4294967295)");
    } else {
      result = facts.repartition(functions.col("k")).selectExpr("count(*)", "sum(xxhash64(k, v) & 4294967295)");
    }
    return result.collectAsList().get(0).toString();
  }

  /** CPU of the application's executor JVMs so far, their every thread and server included. */
  private static long executorCpuNanos(StandaloneCluster cluster) {
    return cluster.executorProcesses().stream()
        .mapToLong(p -> p.info().totalCpuDuration().map(Duration::toNanos).orElse(0L)).sum();
  }

  /** Sums over the tasks and stages that end while it listens. */
  private static final class TaskTotals extends SparkListener {
    volatile long fetchWaitMs;
    volatile long bytesWritten;
    volatile long lastMapStageEndMs;
    volatile long reduceStagesMs;
    final Sums map = new Sums();
    final Sums reduce = new Sums();

    /**
     * One phase's tasks' times, summed as {@link Tasks} says: added under the listener's lock,
     * read by the bench's thread, so volatile as the sums beside them are.
     */
    static final class Sums {
      private volatile long runMs;
      private volatile long cpuNs;
      private volatile long gcMs;
      private volatile long shuffleNs;

      void add(TaskMetrics m, long shuffleNs) {
        runMs += m.executorRunTime();
        cpuNs += m.executorCpuTime();
        gcMs += m.jvmGCTime();
        this.shuffleNs += shuffleNs;
      }

      Tasks tasks() {
        return new Tasks(runMs / 1e3, cpuNs / 1e9, gcMs / 1e3, shuffleNs / 1e9);
      }
    }

    @Override
    public synchronized void onTaskEnd(SparkListenerTaskEnd end) {
      TaskMetrics m = end.taskMetrics();
      if (m != null) {
        fetchWaitMs += m.shuffleReadMetrics().fetchWaitTime();
        bytesWritten += m.shuffleWriteMetrics().bytesWritten();
        if (m.shuffleReadMetrics().totalBlocksFetched() > 0) {
          reduce.add(m, m.shuffleReadMetrics().fetchWaitTime() * 1_000_000);
        } else if (m.shuffleWriteMetrics().bytesWritten() > 0) {
          map.add(m, m.shuffleWriteMetrics().writeTime());
        }
      }
    }

    @Override
    public synchronized void onStageCompleted(SparkListenerStageCompleted completed) {
      StageInfo stage = completed.stageInfo();
      if (stage.submissionTime().isEmpty() || stage.completionTime().isEmpty() || stage.taskMetrics() == null) {
        return;
      }
      long end = (Long) stage.completionTime().get();
      if (stage.taskMetrics().shuffleReadMetrics().totalBlocksFetched() > 0) {
        reduceStagesMs += end - (Long) stage.submissionTime().get();
      } else if (stage.taskMetrics().shuffleWriteMetrics().bytesWritten() > 0) {
        lastMapStageEndMs = Math.max(lastMapStageEndMs, end);
      }
    }
  }
}
