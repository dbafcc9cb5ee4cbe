package io.gpudirect.spark.shuffle;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * A real multi-JVM Spark for shuffle tests: an application with gpudirect's shuffle manager on a
 * two-Worker {@link StandaloneCluster} (a Master and two Workers in JVMs of their own, an executor
 * of one core per Worker), and counters of what its tasks fetched and how they failed.
 */
final class ShuffleCluster implements AutoCloseable {
  final StandaloneCluster cluster;
  final SparkSession spark;
  /** Totals over the application's finished tasks. */
  final AtomicLong remoteBlocksFetched = new AtomicLong();
  final AtomicLong localBlocksFetched = new AtomicLong();
  final AtomicLong fetchWaitMs = new AtomicLong();
  final AtomicLong fetchFailures = new AtomicLong();
  final AtomicLong executorsRemoved = new AtomicLong();
  /** Whether closing this stops the cluster too, not only the application. */
  private final boolean ownsCluster;

  private ShuffleCluster(StandaloneCluster cluster, SparkSession spark, boolean ownsCluster) {
    this.cluster = cluster;
    this.spark = spark;
    this.ownsCluster = ownsCluster;
    spark.sparkContext().addSparkListener(new SparkListener() {
      @Override
      public void onTaskEnd(SparkListenerTaskEnd end) {
        if (end.taskMetrics() != null) {
          remoteBlocksFetched.addAndGet(end.taskMetrics().shuffleReadMetrics().remoteBlocksFetched());
          localBlocksFetched.addAndGet(end.taskMetrics().shuffleReadMetrics().localBlocksFetched());
          fetchWaitMs.addAndGet(end.taskMetrics().shuffleReadMetrics().fetchWaitTime());
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

  /** The cluster these tests run on, under {@code dir}; settings its daemons share with its applications are the caller's to add. */
  static StandaloneCluster.Builder twoWorkers(Path dir) {
    return StandaloneCluster.builder(dir).workers(2).executorCores(1).executorMemoryMb(768);
  }

  /**
   * Starts a two-Worker cluster under {@code dir} and on it an application with gpudirect's
   * shuffle manager and the settings {@code conf} adds; returns once both executors are up.
   * Closing it stops both.
   */
  static ShuffleCluster start(String name, Path dir, Map<String, String> conf) throws Exception {
    return start(name, twoWorkers(dir), conf);
  }

  /** As {@link #start(String, Path, Map)}, on the cluster {@code cluster} describes. */
  static ShuffleCluster start(String name, StandaloneCluster.Builder cluster, Map<String, String> conf) throws Exception {
    StandaloneCluster started = cluster.start();
    try {
      return on(started, name, conf, true);
    } catch (Exception | Error e) {
      started.close();
      throw e;
    }
  }

  /** An application as above on a running cluster, which closing it leaves running. */
  static ShuffleCluster on(StandaloneCluster cluster, String name, Map<String, String> conf) throws Exception {
    return on(cluster, name, conf, false);
  }

  private static ShuffleCluster on(StandaloneCluster cluster, String name, Map<String, String> conf, boolean owns)
      throws Exception {
    SparkSession.Builder builder = cluster.application(name)
        .config("spark.shuffle.manager", GpuDirectShuffleManager.class.getName())
        .config("spark.sql.shuffle.partitions", "8");
    conf.forEach(builder::config);
    return new ShuffleCluster(cluster, cluster.start(builder), owns);
  }

  /**
   * Waits until two executors run again, after a test killed one: the Worker starts another, and
   * the driver knows it and no longer the dead one.
   */
  ShuffleCluster awaitTwoExecutors() throws InterruptedException {
    long deadline = System.nanoTime() + 90_000_000_000L;
    while (executorProcesses().size() != 2 || spark.sparkContext().statusTracker().getExecutorInfos().length != 3) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the cluster has not two executors again within 90 s: "
            + executorProcesses().size() + " executor JVMs");
      }
      Thread.sleep(100);
    }
    return this;
  }

  /** The executors' JVMs, among the Workers' children. */
  List<ProcessHandle> executorProcesses() {
    return cluster.executorProcesses();
  }

  /** Once every event so far has reached the counters above (Spark's listeners run behind its jobs). */
  ShuffleCluster settled() throws java.util.concurrent.TimeoutException {
    spark.sparkContext().listenerBus().waitUntilEmpty(30_000);
    return this;
  }

  /** What a probe asks of an executor's shuffle manager: serializable, as it travels in a task. */
  interface Probe<T> extends java.io.Serializable {
    T ask(GpuDirectShuffleManager manager);
  }

  /**
   * {@code probe}'s answer from each executor's shuffle manager, by executor id: a job of enough
   * tasks that each executor runs some.
   */
  <T> Map<String, T> onEachExecutor(Probe<T> probe) {
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    Map<String, T> byExecutor = new java.util.TreeMap<>();
    jsc.parallelize(java.util.stream.IntStream.range(0, 32).boxed().toList(), 32)
        .map(i -> {
          Thread.sleep(50);  // so that neither executor takes every task
          return new Tuple2<>(SparkEnv.get().executorId(), probe.ask((GpuDirectShuffleManager) SparkEnv.get().shuffleManager()));
        })
        .collect().forEach(t -> byExecutor.put(t._1(), t._2()));
    if (byExecutor.size() < 2) {
      throw new AssertionError("the probe's tasks ran on one executor only: " + byExecutor.keySet());
    }
    return byExecutor;
  }

  /** Bytes the executors' reducers fetched from other executors' servers so far, by transport, summed. */
  Map<String, Long> bytesFetchedByTransport() {
    Map<String, Long> total = new java.util.TreeMap<>();
    onEachExecutor(m -> new java.util.HashMap<>(m.bytesFetchedByTransport())).values()
        .forEach(byTransport -> byTransport.forEach((transport, bytes) -> total.merge(transport, bytes, Long::sum)));
    return total;
  }

  /** The shuffle data files the executors wrote for {@code shuffleId}, by the executor's folder. */
  Map<Path, List<Path>> dataFiles(int shuffleId) throws java.io.IOException {
    String prefix = "shuffle_" + shuffleId + "_";
    Map<Path, List<Path>> byExecutor = new java.util.TreeMap<>();
    for (Path local : cluster.workerLocalDirs()) {
      try (var files = Files.walk(local)) {
        files.filter(f -> f.getFileName().toString().startsWith(prefix) && f.toString().endsWith(".data"))
            .forEach(f -> byExecutor.computeIfAbsent(executorFolder(f), k -> new java.util.ArrayList<>()).add(f));
      }
    }
    return byExecutor;
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
    if (ownsCluster) {
      cluster.close();
    } else {
      spark.stop();
    }
  }
}
