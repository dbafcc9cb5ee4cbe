package io.gpudirect.bench;

import org.apache.spark.sql.SparkSession;

/** The local Spark every bench section runs: no UI, no progress bar, warnings only. */
final class BenchSessions {
  private BenchSessions() {}

  static SparkSession local(String appName, int shufflePartitions) {
    SparkSession spark = SparkSession.builder().appName(appName).master("local[*]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", String.valueOf(shufflePartitions))
        .getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    return spark;
  }
}
