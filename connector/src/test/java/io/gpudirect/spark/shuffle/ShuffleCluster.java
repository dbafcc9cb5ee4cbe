package io.gpudirect.spark.shuffle;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

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

  /** The executors' JVMs: the Workers run in this JVM, so their executors are its children. */
  static List<ProcessHandle> executorProcesses() {
    return ProcessHandle.current().children().filter(ProcessHandle::isAlive)
        .filter(p -> commandLine(p).contains("CoarseGrainedExecutorBackend")).toList();
  }

  /** A process's command line, from /proc: {@code ProcessHandle.Info} leaves out a long one. */
  private static String commandLine(ProcessHandle p) {
    try {
      return new String(Files.readAllBytes(Path.of("/proc", String.valueOf(p.pid()), "cmdline")),
          java.nio.charset.StandardCharsets.UTF_8);
    } catch (java.io.IOException e) {
      return "";
    }
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
