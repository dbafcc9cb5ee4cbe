package io.gpudirect.spark.shuffle;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;

/**
 * A real multi-JVM Spark for shuffle tests: the two-executor {@link LocalCluster}
 * ({@code local-cluster[2,1,1024]}) with gpudirect's shuffle manager, and counters of what its
 * tasks fetched and how they failed.
 */
final class ShuffleCluster implements AutoCloseable {
  final SparkSession spark;
  /** Totals over the application's finished tasks. */
  final AtomicLong remoteBlocksFetched = new AtomicLong();
  final AtomicLong localBlocksFetched = new AtomicLong();
  final AtomicLong fetchFailures = new AtomicLong();
  final AtomicLong executorsRemoved = new AtomicLong();

  private ShuffleCluster(SparkSession spark) {
    this.spark = spark;
    spark.sparkContext().addSparkListener(new SparkListener() {
      @Override
      public void onTaskEnd(SparkListenerTaskEnd end) {
        if (end.taskMetrics() != null) {
          remoteBlocksFetched.addAndGet(end.taskMetrics().shuffleReadMetrics().remoteBlocksFetched());
          localBlocksFetched.addAndGet(end.taskMetrics().shuffleReadMetrics().localBlocksFetched());
        }
        if (end.reason() instanceof org.apache.spark.FetchFailed) {
          fetchFailures.incrementAndGet();
        }
      }

      @Override
      public void onExecutorRemoved(SparkListenerExecutorRemoved removed) {
        executorsRemoved.incrementAndGet();
      }
    });
  }

  /**
   * Starts the cluster with gpudirect's shuffle manager and the settings {@code conf} adds;
   * waits until both executors are up.
   */
  static ShuffleCluster start(String name, Path dir, Map<String, String> conf) throws Exception {
    SparkSession.Builder builder = LocalCluster.builder(name, dir, 2, 1024)
        .config("spark.shuffle.manager", GpuDirectShuffleManager.class.getName())
        .config("spark.sql.shuffle.partitions", "8");
    conf.forEach(builder::config);
    ShuffleCluster cluster = new ShuffleCluster(builder.getOrCreate());
    try {
      LocalCluster.awaitExecutors(cluster.spark, 2, dir, 90);
    } catch (RuntimeException | InterruptedException e) {
      cluster.close();
      throw e;
    }
    return cluster;
  }

  /** Once every event so far has reached the counters above (Spark's listeners run behind its jobs). */
  ShuffleCluster settled() throws java.util.concurrent.TimeoutException {
    spark.sparkContext().listenerBus().waitUntilEmpty(30_000);
    return this;
  }

  /** The shuffle data files the executors wrote for {@code shuffleId}, by the executor's folder. */
  static Map<Path, List<Path>> dataFiles(Path dir, int shuffleId) throws java.io.IOException {
    String prefix = "shuffle_" + shuffleId + "_";
    try (var files = Files.walk(dir.resolve("local"))) {
      return files.filter(f -> f.getFileName().toString().startsWith(prefix) && f.toString().endsWith(".data"))
          .collect(Collectors.groupingBy(ShuffleCluster::executorFolder));
    }
  }

  /** The blockmgr-UUID folder a shuffle file is in (two levels of sub-directories up). */
  private static Path executorFolder(Path file) {
    Path p = file.getParent();
    while (p != null && !p.getFileName().toString().startsWith("blockmgr-")) {
      p = p.getParent();
    }
    return p;
  }

  @Override
  public void close() {
    try {
      spark.stop();
    } finally {
      LocalCluster.forget();
    }
  }
}
