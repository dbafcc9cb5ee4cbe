package io.gpudirect.spark.tpch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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

/** The generated tables: the specification's types and row counts, and the cache on disk. */
class TpchDatasetTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = SparkSession.builder().appName("tpch-dataset-test").master("local[2]")
        .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1").getOrCreate();
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void tablesHaveTheSpecificationsTypesAndAreMadeOnce(@TempDir Path root) throws Exception {
    Path dir = TpchDataset.at(spark, 0.001, root);
    assertEquals(root.resolve("sf0.001"), dir);
    assertEquals("scale factor 0.001\ngenerator io.trino.tpch:tpch:1.2\n", Files.readString(dir.resolve(TpchDataset.MARKER)));

    Dataset<Row> lineitem = spark.read().parquet(dir.resolve("lineitem").toString());
    StructType schema = lineitem.schema();
    assertEquals(DataTypes.LongType, schema.apply("l_orderkey").dataType());
    assertEquals(DataTypes.IntegerType, schema.apply("l_linenumber").dataType());
    assertEquals(DataTypes.createDecimalType(15, 2), schema.apply("l_quantity").dataType());
    assertEquals(DataTypes.createDecimalType(15, 2), schema.apply("l_extendedprice").dataType());
    assertEquals(DataTypes.DateType, schema.apply("l_shipdate").dataType());
    assertEquals(DataTypes.StringType, schema.apply("l_comment").dataType());
    // dbgen's first line item, as its lineitem.tbl has it at every scale factor
    assertEquals("[1,1552,93,1,17.00,24710.35,0.04,0.02,N,O,1996-03-13]", lineitem
        .selectExpr("l_orderkey", "l_partkey", "l_suppkey", "l_linenumber", "l_quantity", "l_extendedprice",
            "l_discount", "l_tax", "l_returnflag", "l_linestatus", "l_shipdate")
        .where("l_orderkey = 1 AND l_linenumber = 1").collectAsList().get(0).toString());
    assertEquals(25, spark.read().parquet(dir.resolve("nation").toString()).count());
    assertEquals(1500, spark.read().parquet(dir.resolve("orders").toString()).count());

    List<String> files = dataFiles(dir);
    assertEquals(dir, TpchDataset.at(spark, 0.001, root));
    assertEquals(files, dataFiles(dir), "a complete copy is reused, not made again");

    Files.delete(dir.resolve(TpchDataset.MARKER)); // as a run that was stopped half-way leaves it
    TpchDataset.at(spark, 0.001, root);
    assertTrue(Files.exists(dir.resolve(TpchDataset.MARKER)));
    assertNotEquals(files, dataFiles(dir), "an incomplete copy is made again");
  }

  /** Spark names its files with a fresh UUID each time: the same names are the same files. */
  private static List<String> dataFiles(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      return files.map(Path::toString).filter(p -> p.endsWith(".parquet")).sorted().toList();
    }
  }
}
