package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.collection.JavaConverters;

/** How a read is cut into partitions, where they prefer to run, and a schema the user gives. */
class ScanPlanningIT {
  @TempDir
  static Path tmp;
  private static ServerFixture fixture;

  @BeforeAll
  static void start() {
    // One file of many small row groups.
    LocalSpark.get().range(0, 300_000, 1, 1).selectExpr("id", "cast(id AS string) AS s", "cast(id * 2.5 AS double) AS d")
        .write().option("parquet.block.size", 128 * 1024).parquet(tmp.resolve("groups").toString());
    fixture = ServerFixture.serve(tmp);
  }

  @AfterAll
  static void stop() {
    fixture.close();
  }

  @Test
  void splitsByRowGroupsTowardTheTargetSizeAndPrefersTheServersHost() {
    SparkSession spark = LocalSpark.get();
    Dataset<Row> whole = spark.read().format("gpudirect").load(fixture.uri("groups"));
    Dataset<Row> split = spark.read().format("gpudirect").option("maxPartitionBytes", "256k")
        .load(fixture.uri("groups"));
    assertEquals(1, partitions(whole).size(), "one small file is one partition by default");
    List<InputPartition> parts = partitions(split);
    assertTrue(parts.size() > 3, "a 256 KiB target cuts the file by row groups: " + parts.size());
    for (InputPartition p : parts) {
      assertArrayEquals(new String[] {"127.0.0.1"}, p.preferredLocations());
    }
    assertEquals(whole.orderBy("id").collectAsList(), split.orderBy("id").collectAsList());
    assertEquals(300_000, split.count());
  }

  @Test
  void aSchemaGivenByTheUserIsUsedAsIs() {
    SparkSession spark = LocalSpark.get();
    StructType schema = StructType.fromDDL("d DOUBLE, id BIGINT");
    Dataset<Row> df = spark.read().format("gpudirect").schema(schema).load(fixture.uri("groups"));
    assertEquals(schema, df.schema());
    assertEquals(spark.read().schema(schema).parquet(tmp.resolve("groups").toString()).orderBy("id").collectAsList(),
        df.orderBy("id").collectAsList());
  }

  private static List<InputPartition> partitions(Dataset<Row> df) {
    return scan(df.queryExecution().executedPlan());
  }

  private static List<InputPartition> scan(SparkPlan plan) {
    if (plan instanceof BatchScanExec) {
      return JavaConverters.seqAsJavaList(((BatchScanExec) plan).inputPartitions());
    }
    for (SparkPlan child : JavaConverters.seqAsJavaList(plan.children())) {
      List<InputPartition> found = scan(child);
      if (found != null) {
        return found;
      }
    }
    return null;
  }
}
