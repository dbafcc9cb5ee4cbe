package io.gpudirect.spark.tpch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The 22 TPC-H queries at SF 0.01 (10 MB), generated here, give the same answers through
 * {@code format("gpudirect")} from a real server on loopback as through {@code spark.read.parquet}
 * of the same files: the runner of docs/benchmarks.md, once, on the CPU.
 */
class TpchEqualityTest {
  @Test
  @Timeout(value = 240, unit = TimeUnit.SECONDS)
  void everyQueryAnswersAlikeOnBothSides(@TempDir Path dir) throws Exception {
    TpchOptions o = new TpchOptions(0.01, 1, 0, TpchQueries.select("all"), dir, false, "local[2]",
        dir.resolve("tpch.json"), Map.of("spark.sql.shuffle.partitions", "4"));
    TpchResults results = TpchRunner.run(o);
    TpchReport.print(results, System.out);
    TpchReport.write(results, o.resultFile());

    assertEquals(TpchQueries.COUNT, results.queries.size());
    assertEquals(java.util.List.of(), results.differences(), "answers that differ");
    for (TpchResults.Query q : results.queries) {
      // an empty answer would be equal whatever the reads returned
      assertTrue(q.rows > 0, q.query.name() + " has no rows at SF 0.01");
    }
  }
}
