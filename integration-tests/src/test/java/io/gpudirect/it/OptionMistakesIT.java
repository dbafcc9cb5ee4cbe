package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.options.UnknownOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mistakes that used to pass in silence: a misspelt option, a timeout without its unit, a
 * directory that mixes formats. Each is now a warning in the driver's log or a clear error.
 */
class OptionMistakesIT {
  @TempDir
  static Path data;

  private static ServerFixture fixture;
  private static SparkSession spark;

  @BeforeAll
  static void serve() throws Exception {
    spark = LocalSpark.get();
    spark.range(0, 1000, 1, 2).selectExpr("id", "id * 2 AS twice").write().parquet(data.resolve("trips").toString());
    // A folder of Parquet with a stray CSV export beside it, and one of CSV only.
    spark.range(0, 1000, 1, 2).selectExpr("id", "id * 2 AS twice").write().parquet(data.resolve("mixed").toString());
    Files.writeString(data.resolve("mixed/export.csv"), "id,twice\n1,2\n");
    Files.createDirectories(data.resolve("csvonly"));
    Files.writeString(data.resolve("csvonly/a.csv"), "id,twice\n1,2\n");
    fixture = ServerFixture.serve(data);
  }

  @AfterAll
  static void stop() {
    spark.conf().unset("spark.gpudirect.strems");
    fixture.close();
  }

  @Test
  void misspeltOptionsAreWarnedAboutOnceNamingTheClosestOption() {
    try (LogCapture log = LogCapture.of(UnknownOptions.class)) {
      spark.conf().set("spark.gpudirect.strems", "8");
      for (int i = 0; i < 2; i++) {
        assertEquals(1000, spark.read().format("gpudirect")
            .option("tranport", "tcp")
            .option("parquet.read.support.class", "x") // a Parquet setting: it reaches Hadoop's conf
            .load(fixture.uri("trips")).count());
      }
      assertEquals(List.of(
          "Unknown gpudirect option 'tranport' is ignored; did you mean 'transport'?",
          "Unknown gpudirect setting 'spark.gpudirect.strems' is ignored; did you mean 'spark.gpudirect.streams'?"),
          log.warnings());
    } finally {
      spark.conf().unset("spark.gpudirect.strems");
    }
  }

  @Test
  void aTimeoutWithoutAUnitIsWarnedAboutAndUnitsAreTaken() {
    try (LogCapture log = LogCapture.of(ResolvedOptions.class)) {
      assertEquals(1000, spark.read().format("gpudirect").option("requestTimeout", "2min")
          .option("connectTimeout", "1500ms").option("retryBackoff", "1s").load(fixture.uri("trips")).count());
      assertEquals(List.of(), log.warnings());
      assertEquals(1000, spark.read().format("gpudirect").option("requestTimeout", "900")
          .load(fixture.uri("trips")).count());
      assertEquals(List.of("Option requestTimeout=900 has no unit and is read as 900 ms; write 900s for"
          + " seconds, or 900ms to keep milliseconds"), log.warnings());
    }
  }

  /**
   * spark.read.parquet reads every file of a directory as Parquet and fails on the CSV; the
   * gpudirect format used to return the Parquet rows alone. Now it fails too, before any task,
   * naming the stray file and both ways out.
   */
  @Test
  void aDirectoryMixingFormatsIsRefusedAsSparkRefusesIt() {
    assertThrows(Exception.class, () -> spark.read().parquet(data.resolve("mixed").toString()).collectAsList(),
        "Spark's own reader fails on the directory");
    String location = fixture.uri("mixed");
    Exception e = assertThrows(Exception.class, () -> spark.read().format("gpudirect").load(location).count());
    assertEquals("Cannot read " + location + ": beside its 2 Parquet or Arrow IPC file(s) it holds 1 file(s)"
        + " of another format (mixed/export.csv), as spark.read.parquet would refuse it. To read only the"
        + " Parquet and Arrow files, set option pathGlobFilter to \"*.parquet\"; to read the others, use"
        + " Spark's own reader on the same URI, which the gpudirect:// file system serves:"
        + " spark.read.option(\"pathGlobFilter\", \"*.csv\").csv(\"" + location + "\")", e.getMessage());
    assertEquals(1000, spark.read().format("gpudirect").option("pathGlobFilter", "*.parquet").load(location).count());
    List<Row> csv = spark.read().option("header", "true").option("pathGlobFilter", "*.csv").csv(location)
        .collectAsList();
    assertEquals("[1,2]", csv.get(0).toString());
  }

  @Test
  void aDirectoryOfCsvPointsToSparksCsvReader() {
    String location = fixture.uri("csvonly");
    Exception e = assertThrows(Exception.class, () -> spark.read().format("gpudirect").load(location).count());
    assertEquals("No Parquet or Arrow IPC files under " + location + " (the formats the gpudirect format"
        + " reads); found 1 other file(s): csvonly/a.csv. To read them, use Spark's own reader on the same"
        + " URI, which the gpudirect:// file system serves: spark.read.csv(\"" + location + "\"); or, for"
        + " Parquet or Arrow files without their extension, set option format to parquet or arrow",
        e.getMessage());
    assertEquals(1, spark.read().option("header", "true").csv(location).count());
    Exception csv = assertThrows(Exception.class,
        () -> spark.read().format("gpudirect").option("format", "csv").load(location).count());
    assertEquals("format csv is not read by the gpudirect format, which reads parquet and arrow (Arrow IPC):"
        + " read csv files with spark.read.csv(\"gpudirect://HOST:PORT/PATH\"), Spark's own reader over the"
        + " gpudirect:// file system", csv.getMessage());
  }
}
