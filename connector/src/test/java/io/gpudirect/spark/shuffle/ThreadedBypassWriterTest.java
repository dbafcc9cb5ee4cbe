package io.gpudirect.spark.shuffle;

import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.spark.LocalSessions;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.SparkEnv;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The threaded writer's map task that fails part-way, its records' iterator throwing after some
 * chunks went to the writer threads: the task fails with the iterator's error, leaves none of its
 * partitions' files behind, and the threads write the next job's map outputs as before. (Rows and
 * bytes against Spark's writer: ShuffleClusterQueriesTest, ShuffleClusterMetricsTest.)
 */
class ThreadedBypassWriterTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = LocalSessions.builder("gpudirect-threaded-writer", 2)
        .config("spark.shuffle.manager", GpuDirectShuffleManager.class.getName())
        .config(ExecutorShuffle.WRITE_THREADS, "2")
        .config("spark.sql.adaptive.enabled", "false")
        .getOrCreate();
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  @Test
  void aMapTaskThatFailsPartWayLeavesNoFilesAndTheThreadsWriteOn() throws IOException {
    // 8 partitions of long strings: each map task hands several 256 KiB chunks over before the row that fails.
    Exception e = assertThrows(Exception.class, () -> spark.range(0, 400_000, 1, 2)
        .selectExpr("id", "CASE WHEN id = 390000 THEN raise_error('row 390000 refused') ELSE repeat('x', 40) END AS s")
        .repartition(8, col("id")).selectExpr("sum(length(s))").collect());
    assertTrue(String.valueOf(e.getMessage()).contains("row 390000 refused"), "the iterator's error: " + e);
    assertTrue(Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals("gpudirect-shuffle-write-2")),
        "the writer threads wrote the map outputs");
    assertEquals(List.of(), tempShuffleFiles(), "partitions' files left by the failed map task");

    assertEquals(16_000_000L, spark.range(0, 400_000, 1, 2).selectExpr("id", "repeat('x', 40) AS s")
        .repartition(8, col("id")).selectExpr("sum(length(s))").collectAsList().get(0).getLong(0));
    assertEquals(List.of(), tempShuffleFiles(), "partitions' files left after a map output was joined");
  }

  /**
   * Every byte of many chunks, each written from a chunk that the writer threads gave back and the
   * task filled again: the rows' hash after the shuffle is the one before it.
   */
  @Test
  void recycledChunksCarryEveryRowIntact() {
    String[] rows = {"id", "concat(repeat(cast(id AS STRING), 1 + CAST(id % 17 AS INT)), 'end') AS s"};
    String[] hash = {"sum(xxhash64(id, s) & 4294967295) AS h", "count(*) AS n"};
    org.apache.spark.sql.Row before = spark.range(0, 600_000, 1, 3).selectExpr(rows).selectExpr(hash)
        .collectAsList().get(0);
    org.apache.spark.sql.Row after = spark.range(0, 600_000, 1, 3).selectExpr(rows).repartition(5, col("s"))
        .selectExpr(hash).collectAsList().get(0);
    assertEquals(600_000L, after.getLong(1));
    assertEquals(before.getLong(0), after.getLong(0), "the rows' hash after the threaded writer's shuffle");
  }

  private static List<String> tempShuffleFiles() throws IOException {
    List<String> found = new java.util.ArrayList<>();
    for (File dir : SparkEnv.get().blockManager().diskBlockManager().localDirs()) {
      try (Stream<Path> files = Files.walk(dir.toPath())) {
        files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("temp_shuffle_")).forEach(found::add);
      }
    }
    return found;
  }
}
