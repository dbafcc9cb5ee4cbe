package io.gpudirect.it;

import java.nio.file.Path;
import org.apache.spark.sql.SparkSession;

/** One local Spark for every test class of the run: starting one costs seconds. */
final class LocalSpark {
  private static SparkSession spark;

  private LocalSpark() {}

  static synchronized SparkSession get() {
    if (spark == null) {
      spark = SparkSession.builder()
          .appName("gpudirect-it")
          .master("local[2]")
          .config("spark.ui.enabled", "false")
          .config("spark.sql.shuffle.partitions", "2")
          // Plans are inspected for scan metrics; adaptive execution would wrap them.
          .config("spark.sql.adaptive.enabled", "false")
          .config("spark.sql.session.timeZone", "UTC")
          .getOrCreate();
      spark.sparkContext().setLogLevel("WARN");
    }
    return spark;
  }

  static Path testdata() {
    return Path.of(System.getProperty("gpudirect.testdata", "../../shared/testdata")).toAbsolutePath().normalize();
  }
}
