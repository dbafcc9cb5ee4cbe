package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every Parquet file nobody here wrote reads through gpudirect exactly as spark.read.parquet reads it. */
class ParquetConformanceIT {
  private static ServerFixture fixture;

  @BeforeAll
  static void start() {
    fixture = ServerFixture.serve(LocalSpark.testdata());
  }

  @AfterAll
  static void stop() {
    fixture.close();
  }

  static Stream<String> files() throws IOException {
    return LocalSpark.testdataFiles("parquet", n -> n.endsWith(".parquet"));
  }


  /**
   * Where Spark's own default (vectorized) reader refuses a file, gpudirect must refuse it too,
   * naming it; both are then compared with Spark's row-based reader.
   */
  @ParameterizedTest
  @MethodSource("files")
  void readsLikeSparkParquet(String name) {
    SparkSession spark = LocalSpark.get();
    String local = LocalSpark.testdata().resolve("parquet").resolve(name).toString();
    try {
      spark.read().parquet(local).collectAsList();
    } catch (Exception sparkRefused) {
      Exception ours = assertThrows(Exception.class,
          () -> spark.read().format("gpudirect").load(fixture.uri("parquet/" + name)).collectAsList());
      assertTrue(ours.getMessage().contains(name), ours.getMessage());
      spark.conf().set("spark.sql.parquet.enableVectorizedReader", "false");
    }
    try {
      compare(spark, name, local);
    } finally {
      spark.conf().unset("spark.sql.parquet.enableVectorizedReader");
    }
  }

  /**
   * A decimal stored as a byte array: Spark's vectorized reader, ours as Spark's own, cannot
   * convert it; the error names the file, the column and the setting that reads it.
   */
  @org.junit.jupiter.api.Test
  void aColumnTheVectorizedReaderCannotConvertIsNamedWithTheSettingThatReadsIt() {
    String name = "byte_array_decimal.parquet";
    String local = LocalSpark.testdata().resolve("parquet").resolve(name).toString();
    // Spark's own vectorized reader cannot read it either: on Spark 3.5 it refuses the column
    // (SchemaColumnConvertNotSupportedException), on Spark 4.0 its binary-to-decimal updater
    // fails inside the column vector (a NullPointerException in WritableColumnVector.arrayData).
    assertThrows(Exception.class, () -> LocalSpark.get().read().parquet(local).collectAsList(),
        "Spark's own reader reads " + name + " now: compare the rows instead");
    Exception e = assertThrows(Exception.class,
        () -> LocalSpark.get().read().format("gpudirect").load(fixture.uri("parquet/" + name)).collectAsList());
    String message = rootMessage(e);
    if (org.apache.spark.package$.MODULE$.SPARK_VERSION().startsWith("3.")) {
      assertTrue(message.startsWith("Cannot read column [value] of " + fixture.uri("parquet/" + name)
          + ": it is stored as BINARY") && message.contains("decimal(4,2)")
          && message.contains("spark.sql.parquet.enableVectorizedReader=false"), message);
    } else {
      assertTrue(message.startsWith("Cannot read " + fixture.uri("parquet/" + name)), message);
    }
  }

  /** The first message of the chain that names no exception class: what the user is meant to read. */
  private static String rootMessage(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof io.gpudirect.GpuDirectException) {
        return t.getMessage();
      }
    }
    return e.getMessage();
  }

  private static void compare(SparkSession spark, String name, String local) {
    List<Row> expected = spark.read().parquet(local).collectAsList();
    var remote = spark.read().format("gpudirect").load(fixture.uri("parquet/" + name));
    assertEquals(spark.read().parquet(local).schema(), remote.schema(), "schema of " + name);
    List<Row> actual = remote.collectAsList();
    assertEquals(expected.size(), actual.size(), "row count of " + name);
    for (int i = 0; i < expected.size(); i++) {
      assertEquals(expected.get(i), actual.get(i), "row " + i + " of " + name);
    }
  }
}
