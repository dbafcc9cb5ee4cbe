package io.gpudirect.spark.shuffle;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import org.apache.spark.sql.SparkSession;

/**
 * A real multi-JVM Spark on one machine, for the shuffle's tests and its bench:
 * {@code local-cluster[N,1,MB]}, a Master and N Workers in this JVM and each Worker's executor in
 * a JVM of its own, so that reducers fetch most blocks from another executor, as on a cluster
 * (never {@code local[*]}, where every block is local). The executors run from this JVM's class
 * path (Maven's jars and class folders, or the CLI's: no Spark distribution is needed), found by
 * Spark's launcher in its testing mode; the Workers' folders and the executors' local
 * directories are under {@code dir}. One at a time per JVM, as a {@code SparkContext} is.
 */
public final class LocalCluster {
  private LocalCluster() {}

  /**
   * A session builder for {@code executors} executors of one core and {@code memoryMb} MiB each
   * (a quarter of it left to the JVM), with no UI and broadcast joins off; the caller adds its
   * settings (the shuffle manager among them), calls {@code getOrCreate()}, then
   * {@link #awaitExecutors} and, once stopped, {@link #forget}.
   */
  public static SparkSession.Builder builder(String appName, Path dir, int executors, int memoryMb)
      throws IOException {
    // Spark's launcher builds an executor's class path from a Spark distribution unless it is
    // testing; in testing mode the Workers keep their folders under spark.test.home.
    System.setProperty("spark.testing", "true");
    // The Workers give their executors the JVM's local root directories, which Spark computes once
    // per JVM: forget an earlier cluster's, so that these executors write under dir.
    org.apache.spark.util.Utils$.MODULE$.clearLocalRootDirs();
    System.setProperty("spark.test.home", Files.createDirectories(dir.resolve("spark-home")).toString());
    String opens = ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(a -> a.startsWith("--add-opens") || a.startsWith("-Djdk.reflect"))
        .collect(Collectors.joining(" "));
    return SparkSession.builder()
        .appName(appName)
        .master("local-cluster[" + executors + ",1," + memoryMb + "]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.local.dir", Files.createDirectories(dir.resolve("local")).toString())
        .config("spark.executor.memory", (memoryMb * 3 / 4) + "m")
        .config("spark.executor.extraClassPath", System.getProperty("java.class.path"))
        .config("spark.executor.extraJavaOptions", opens + " -XX:MaxDirectMemorySize=" + (memoryMb / 2) + "m")
        .config("spark.executorEnv.SPARK_SCALA_VERSION", scalaBinaryVersion())
        // The launcher's own test switch ("1", where Spark passes spark.testing on as "true").
        .config("spark.executorEnv.SPARK_TESTING", "1")
        .config("spark.sql.autoBroadcastJoinThreshold", "-1");
  }

  /** Waits until the cluster's executors have registered; fails naming the Workers' folder where they log. */
  public static void awaitExecutors(SparkSession spark, int executors, Path dir, long timeoutSeconds)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeoutSeconds * 1_000_000_000L;
    // The driver counts itself among the executors it knows.
    while (spark.sparkContext().getExecutorMemoryStatus().size() < executors + 1) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("The cluster's " + executors + " executors did not register within "
            + timeoutSeconds + " s; see " + dir.resolve("spark-home/work"));
      }
      Thread.sleep(100);
    }
  }

  /** After the session has stopped: what {@link #builder} set in this JVM, undone. */
  public static void forget() {
    org.apache.spark.util.Utils$.MODULE$.clearLocalRootDirs();
    System.clearProperty("spark.testing");
    System.clearProperty("spark.test.home");
  }

  private static String scalaBinaryVersion() {
    String v = scala.util.Properties.versionNumberString();
    return v.substring(0, v.lastIndexOf('.'));
  }
}
