package io.gpudirect.it;

import io.gpudirect.testing.TestData;
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

  /** The names of the files in {@code testdata/dir} that {@code keep} accepts, sorted. */
  static java.util.stream.Stream<String> testdataFiles(String dir, java.util.function.Predicate<String> keep)
      throws java.io.IOException {
    try (java.util.stream.Stream<Path> s = java.nio.file.Files.list(testdata().resolve(dir))) {
      return s.map(p -> p.getFileName().toString()).filter(keep).sorted().toList().stream();
    }
  }

  static Path testdata() {
    return TestData.root();
  }
}
