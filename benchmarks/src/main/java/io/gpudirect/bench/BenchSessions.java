package io.gpudirect.bench;

import java.nio.file.Path;
import org.apache.spark.sql.SparkSession;

/** The local Spark every bench section runs: no UI, no progress bar, warnings only. */
final class BenchSessions {
  private BenchSessions() {}

  /**
   * {@code work}: the bench's own directory, which also takes Spark's warehouse (made at the first
   * query, by default as spark-warehouse/ in the caller's directory, and left there).
   */
  static SparkSession local(String appName, int shufflePartitions, Path work) {
    SparkSession spark = SparkSession.builder().appName(appName).master("local[*]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", String.valueOf(shufflePartitions))
        .config("spark.sql.warehouse.dir", work.resolve("spark-warehouse").toString())
        .getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    return spark;
  }
}
