package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Option output on an executor without a GPU (CI): host and auto read exactly as
 * spark.read.parquet does, gpu fails clearly instead of quietly reading on the host, and a
 * misspelt value is named. The GPU side is GpuParquetOutputGpuTest, run on the H200.
 */
class OutputOptionIT {
  private static ServerFixture fixture;

  @BeforeAll
  static void start() {
    fixture = ServerFixture.serve(LocalSpark.testdata());
  }

  @AfterAll
  static void stop() {
    fixture.close();
  }

  @Test
  void hostAndAutoGiveSparksRowsWithoutAGpu() {
    SparkSession spark = LocalSpark.get();
    String local = LocalSpark.testdata().resolve("parquet/alltypes_plain.parquet").toString();
    List<Row> expected = spark.read().parquet(local).orderBy("id").collectAsList();
    for (String output : new String[] {"host", "auto", "AUTO"}) {
      List<Row> rows = spark.read().format("gpudirect").option("output", output)
          .load(fixture.uri("parquet/alltypes_plain.parquet")).orderBy("id").collectAsList();
      assertEquals(expected, rows, "output=" + output);
    }
  }

  @Test
  void gpuOnAnExecutorWithoutAGpuFailsSayingSo() {
    SparkSession spark = LocalSpark.get();
    Exception e = assertThrows(Exception.class, () -> spark.read().format("gpudirect").option("output", "gpu")
        .load(fixture.uri("parquet/alltypes_plain.parquet")).collectAsList());
    assertTrue(messages(e).contains("output=gpu needs a GPU and cuDF"), messages(e));
  }

  @Test
  void aMisspeltValueIsNamedBeforeAnyTaskRuns() {
    SparkSession spark = LocalSpark.get();
    Exception e = assertThrows(Exception.class, () -> spark.read().format("gpudirect").option("output", "device")
        .load(fixture.uri("parquet/alltypes_plain.parquet")));
    assertTrue(messages(e).contains("Invalid value 'device' for option output: expected auto, gpu or host"),
        messages(e));
  }

  private static String messages(Throwable e) {
    StringBuilder b = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      b.append(t.getMessage()).append(" / ");
    }
    return b.toString();
  }
}
