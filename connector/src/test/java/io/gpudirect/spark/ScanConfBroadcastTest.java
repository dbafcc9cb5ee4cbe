package io.gpudirect.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.TestData;
import java.lang.reflect.Field;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import scala.collection.JavaConverters;

/**
 * Every scan of one table shares one broadcast of its Hadoop conf: a broadcast costs
 * milliseconds (a thousand keys serialized and compressed), and Spark asks for a reader factory
 * once per copy of the scan's plan node. What differs between the scans (the columns read)
 * travels in the reader factory instead, so each still reads exactly its own columns.
 */
class ScanConfBroadcastTest {
  private static BlockServer server;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    server = BlockServer.builder().root(TestData.root().resolve("parquet")).bindAddress("127.0.0.1").port(0)
        .build().start();
    spark = LocalSessions.builder("gpudirect-conf-broadcast", 2)
        .getOrCreate();
  }

  @AfterAll
  static void stop() {
    LocalSessions.stop(spark, server);
  }

  @Test
  void scansOfOneTableShareOneBroadcastAndEachReadsItsOwnColumns() throws Exception {
    String file = "alltypes_plain.parquet";
    Dataset<Row> remote = spark.read().format("gpudirect").load("gpudirect://127.0.0.1:" + server.port() + "/" + file);
    Dataset<Row> local = spark.read().parquet(TestData.root().resolve("parquet").resolve(file).toString());
    Set<Long> broadcasts = new HashSet<>();
    for (String[] columns : List.of(new String[] {"id", "bool_col"}, new String[] {"string_col", "double_col"},
        new String[] {"id", "bool_col"})) {
      Dataset<Row> read = remote.selectExpr(columns);
      assertEquals(local.selectExpr(columns).collectAsList(), read.collectAsList(), String.join(",", columns));
      BatchScanExec scan = scan(read.queryExecution().executedPlan());
      broadcasts.add(broadcastId(scan));
      broadcasts.add(broadcastId((BatchScanExec) scan.clone()));
    }
    // A self-join: two scans of the table, with other columns, in one plan.
    Dataset<Row> joined = remote.selectExpr("id", "int_col").join(remote.selectExpr("id", "float_col"), "id");
    assertEquals(local.selectExpr("id", "int_col").join(local.selectExpr("id", "float_col"), "id")
        .orderBy("id").collectAsList(), joined.orderBy("id").collectAsList());
    assertEquals(1, broadcasts.size(), "broadcasts of the table's conf: " + broadcasts);
  }

  private static BatchScanExec scan(SparkPlan plan) {
    for (SparkPlan leaf : JavaConverters.seqAsJavaList(plan.collectLeaves())) {
      if (leaf instanceof BatchScanExec b) {
        return b;
      }
    }
    throw new AssertionError("no BatchScanExec in " + plan);
  }

  private static long broadcastId(BatchScanExec scan) throws ReflectiveOperationException {
    Field f = GpuDirectReaderFactory.class.getDeclaredField("conf");
    f.setAccessible(true);
    return ((Broadcast<?>) f.get(scan.readerFactory())).id();
  }
}
