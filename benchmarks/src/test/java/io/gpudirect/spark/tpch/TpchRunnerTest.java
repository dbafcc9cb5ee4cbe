package io.gpudirect.spark.tpch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TPC-H runner of docs/benchmarks.md on the CPU, in one local Spark, at SF 0.01 (10 MB): the
 * generated tables (the specification's types, the cache on disk), made once for both tests
 * whichever runs first, and the 22 queries, whose answers through {@code format("gpudirect")}
 * from a real server on loopback must be those of {@code spark.read.parquet} on the same files.
 */
class TpchRunnerTest {
  @TempDir
  static Path root;
  private static TpchOptions options;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    options = new TpchOptions(0.01, 1, 0, TpchQueries.select("all"), root, false, "local[2]",
        root.resolve("tpch.json"), Optional.of(root.resolve("profile")), Map.of("spark.sql.shuffle.partitions", "4"));
    spark = TpchRunner.session(options);
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  @Timeout(value = 240, unit = TimeUnit.SECONDS)
  void everyQueryAnswersAlikeOnBothSides() throws Exception {
    TpchResults results = TpchRunner.run(spark, options);
    TpchReport.print(results, System.out);
    TpchReport.write(results, options.resultFile());

    assertEquals(TpchQueries.COUNT, results.queries.size());
    assertEquals(List.of(), results.differences(), "answers that differ");
    for (TpchResults.QueryResult q : results.queries) {
      // an empty answer would be equal whatever the reads returned
      assertTrue(q.rows > 0, q.query.name() + " has no rows at SF 0.01");
    }
    assertTrue(Files.readString(options.resultFile()).contains("\"query\" : \"q22\""));
    // The profile: each side's final plan of q1 with the SQL tab's metrics, the scan's rows among them.
    String local = Files.readString(options.profileDir().orElseThrow().resolve("q1-local.txt"));
    String gpudirect = Files.readString(options.profileDir().orElseThrow().resolve("q1-gpudirect.txt"));
    assertTrue(local.contains("| number of output rows: 60,175"), local);
    assertTrue(gpudirect.contains("| number of output rows: 60,175"), gpudirect);
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void tablesHaveTheSpecificationsTypesAndAreMadeOnce() throws Exception {
    Path dir = TpchDataset.at(spark, 0.01, root);
    assertEquals(root.resolve("sf0.01"), dir);
    assertEquals("scale factor 0.01\ngenerator io.trino.tpch:tpch:1.2\n", Files.readString(dir.resolve(TpchDataset.MARKER)));

    Dataset<Row> lineitem = spark.read().parquet(dir.resolve("lineitem").toString());
    StructType schema = lineitem.schema();
    assertEquals(DataTypes.LongType, schema.apply("l_orderkey").dataType());
    assertEquals(DataTypes.IntegerType, schema.apply("l_linenumber").dataType());
    assertEquals(DataTypes.createDecimalType(15, 2), schema.apply("l_quantity").dataType());
    assertEquals(DataTypes.createDecimalType(15, 2), schema.apply("l_extendedprice").dataType());
    assertEquals(DataTypes.DateType, schema.apply("l_shipdate").dataType());
    assertEquals(DataTypes.StringType, schema.apply("l_comment").dataType());
    // The first line item at SF 0.01: 17 of part 1552, whose retail price by the specification's
    // formula (clause 4.2.3) is (90000 + (1552 / 10) % 20001 + 100 * (1552 % 1000)) / 100 = 1453.55.
    assertEquals("[1,1552,93,1,17.00,24710.35,0.04,0.02,N,O,1996-03-13]", lineitem
        .selectExpr("l_orderkey", "l_partkey", "l_suppkey", "l_linenumber", "l_quantity", "l_extendedprice",
            "l_discount", "l_tax", "l_returnflag", "l_linestatus", "l_shipdate")
        .where("l_orderkey = 1 AND l_linenumber = 1").collectAsList().get(0).toString());
    assertEquals(60_175, lineitem.count());
    assertEquals(25, spark.read().parquet(dir.resolve("nation").toString()).count());

    List<String> files = dataFiles(dir);
    assertEquals(dir, TpchDataset.at(spark, 0.01, root));
    assertEquals(files, dataFiles(dir), "a complete copy is reused, not made again");

    Files.delete(dir.resolve(TpchDataset.MARKER)); // as a run stopped half-way leaves it
    TpchDataset.at(spark, 0.01, root);
    assertTrue(Files.exists(dir.resolve(TpchDataset.MARKER)));
    assertNotEquals(files, dataFiles(dir), "an incomplete copy is made again");
    assertEquals(60_175, spark.read().parquet(dir.resolve("lineitem").toString()).count(), "and replaced, not added to");
  }

  /** Spark names its files with a fresh UUID each time: the same names are the same files. */
  private static List<String> dataFiles(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      return files.map(Path::toString).filter(p -> p.endsWith(".parquet")).sorted().toList();
    }
  }
}
