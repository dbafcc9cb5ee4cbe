package io.gpudirect.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.server.BlockServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.collection.JavaConverters;

/**
 * A gpudirect scan's tasks report the bytes they read in Spark's own input metrics, as a file
 * source's do: the "Input" column of the UI's stages, {@code SparkListenerTaskEnd}'s task metrics
 * and the history server all read them, and a scan that reports rows but 0 bytes looks broken
 * there (the RAPIDS pass-through at SF 30 showed "input 0 B" for 180 M rows of lineitem).
 */
class ScanInputMetricsTest {
  @TempDir
  static Path root;

  private static BlockServer server;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = LocalSessions.builder("gpudirect-scan-input-metrics", 2).getOrCreate();
    spark.sql("SELECT id AS key, id * 0.25 AS amount, concat('note ', id) AS note FROM range(0, 200000)")
        .repartition(3).write().parquet(root.resolve("t").toString());
    server = LocalSessions.serveAsViews(spark, root, "t");
  }

  @AfterAll
  static void stop() {
    LocalSessions.stop(spark, server);
  }

  @Test
  void theTasksReportTheBytesTheyFetchedAndTheRowsTheyRead() throws Exception {
    InputTotals totals = new InputTotals();
    spark.sparkContext().addSparkListener(totals);
    try {
      var query = spark.sql("SELECT key, note FROM remote_t");
      query.queryExecution().toRdd().count(); // the scan's rows, without a collect's copies
      spark.sparkContext().listenerBus().waitUntilEmpty();
      long fetched = bytesFetched(query.queryExecution().executedPlan());
      assertEquals(200_000, totals.records.get(), "records read");
      assertTrue(fetched > 0, "the scan's own bytes-fetched metric: " + fetched);
      assertEquals(fetched, totals.bytes.get(), "Spark's input bytes are the bytes the scan fetched");
      assertTrue(totals.bytes.get() < filesSize(), "two of three columns, less than the files: " + totals.bytes.get());
    } finally {
      spark.sparkContext().removeSparkListener(totals);
    }
  }

  private static long bytesFetched(SparkPlan plan) {
    return JavaConverters.seqAsJavaList(plan.collectLeaves()).stream()
        .mapToLong(p -> p.metrics().get("bytesFetched").map(m -> m.value()).getOrElse(() -> 0L)).sum();
  }

  private static long filesSize() throws IOException {
    try (Stream<Path> files = Files.list(root.resolve("t"))) {
      return files.filter(f -> f.toString().endsWith(".parquet")).mapToLong(f -> f.toFile().length()).sum();
    }
  }

  private static final class InputTotals extends SparkListener {
    final AtomicLong bytes = new AtomicLong();
    final AtomicLong records = new AtomicLong();

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.taskMetrics() != null) {
        bytes.addAndGet(end.taskMetrics().inputMetrics().bytesRead());
        records.addAndGet(end.taskMetrics().inputMetrics().recordsRead());
      }
    }
  }
}
