package io.gpudirect.spark.tpch;

import io.gpudirect.spark.rapids.RapidsSessions;
import java.nio.file.Path;
import org.apache.spark.sql.SparkSession;

/**
 * Issue 30's TPC-H run: the 22 queries on local Parquet through {@code spark.read.parquet} and
 * through {@code format("gpudirect")} from a server on loopback in its own JVM, medians of
 * interleaved rounds, every answer compared. Not a test (Maven's runs never pick it: its name
 * does not end in Test; {@link TpchRunnerTest} is the one CI runs): on the GPU lab, through
 * the JUnit launcher, whose class loader the RAPIDS plugin's shims need, after
 * dev/gpu-lab-rapids: {@code JAVA_OPTS="-Dgpudirect.tpch.sf=10 ..." run.sh junit
 * --select-method io.gpudirect.spark.tpch.TpchBenchmark#run}; by hand elsewhere with {@code java
 * -cp ... io.gpudirect.spark.tpch.TpchBenchmark}. {@link TpchOptions} lists the properties;
 * docs/benchmarks.md gives the commands and keeps the figures.
 *
 * <p>SF 30 on the GPU lab, whose commands end after 600 s, runs in sittings on a machine that
 * stays warm (tables made once, warm-ups at SF 1, the file written after every timed round, the
 * sittings' files merged with {@code -Dgpudirect.tpch.merge}, which needs neither Spark nor a
 * GPU): docs/benchmarks.md, "SF 30, in sittings", gives the commands.
 */
public final class TpchBenchmark {
  @org.junit.jupiter.api.Test
  void run() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(System.getProperty("gpudirect.tpch.sf") != null
        || System.getProperty("gpudirect.tpch.merge") != null,
        "a benchmark: run with -Dgpudirect.tpch.sf=SCALE_FACTOR, or -Dgpudirect.tpch.merge=A.json,B.json");
    main(new String[0]);
  }

  public static void main(String[] args) throws Exception {
    String merge = System.getProperty("gpudirect.tpch.merge");
    if (merge != null) {
      TpchResults merged = TpchMerge.merge(TpchMerge.files(merge));
      report(merged, Path.of(System.getProperty("gpudirect.tpch.out",
          "tpch-sf" + TpchDataset.scaleName(merged.settings.scaleFactor()) + "-merged.json")));
      return;
    }
    TpchOptions o = TpchOptions.fromSystemProperties();
    if (!o.rapids()) {
      System.out.println(RapidsSessions.pluginVersion().isPresent() ? "the RAPIDS Accelerator is switched off"
          : "the RAPIDS Accelerator is not on the class path: Spark on the CPU");
    }
    SparkSession spark = TpchRunner.session(o);
    TpchResults results;
    try {
      // written after each round too: a command stopped at its time limit keeps the rounds it finished
      results = TpchRunner.run(spark, o, r -> TpchReport.write(r, o.resultFile()));
    } finally {
      spark.stop();
    }
    report(results, o.resultFile());
  }

  private static void report(TpchResults results, Path file) {
    TpchReport.print(results, System.out);
    TpchReport.write(results, file);
    System.out.println("results in " + file.toAbsolutePath());
    if (!results.differences().isEmpty()) {
      throw new AssertionError("TPC-H answers differ:\n" + String.join("\n", results.differences()));
    }
  }
}
