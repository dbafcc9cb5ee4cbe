package io.gpudirect.spark.rapids;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gpudirect.server.BlockServer;
import io.gpudirect.spark.LocalSessions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import scala.collection.JavaConverters;

/**
 * With gpudirect's extension, an {@code EXISTS (SELECT * ...)} subquery over a gpudirect table
 * reads the columns that {@code spark.read.parquet} reads for it, not all of them (TPC-H's q4,
 * q21 and q22; Spark 3.5.3, which the RAPIDS Accelerator 24.12 runs on, read every column of a V2
 * scan there). On a Spark that prunes them itself (3.5.7 and later) this holds without the rule.
 */
class ExistsSubqueryPruningTest {
  private static final String QUERY = "SELECT o.priority, count(*) AS n FROM %1$sorders o WHERE o.day < 40 AND"
      + " %2$s EXISTS (SELECT * FROM %1$sitems i WHERE i.order_id = o.id AND i.committed < i.received)"
      + " GROUP BY o.priority";
  @TempDir
  static Path root;

  private static BlockServer server;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = LocalSessions.builder("gpudirect-exists-pruning", 2)
        .config("spark.sql.extensions", GpuDirectRapidsExtensions.class.getName())
        .getOrCreate();
    spark.sql("SELECT id, CAST(id % 100 AS INT) AS day, concat('p', id % 5) AS priority FROM range(0, 2000)")
        .write().parquet(root.resolve("orders").toString());
    spark.sql("SELECT id % 2000 AS order_id, id AS line, CAST(id % 31 AS INT) AS committed,"
        + " CAST(id % 29 AS INT) AS received, id * 0.5 AS price, concat('note ', id) AS note FROM range(0, 8000)")
        .write().parquet(root.resolve("items").toString());
    server = LocalSessions.serveAsViews(spark, root, "orders", "items");
  }

  @AfterAll
  static void stop() {
    LocalSessions.stop(spark, server);
  }

  @ParameterizedTest(name = "{0}EXISTS")
  @ValueSource(strings = {"", "NOT "})
  void anExistsSubqueryReadsOnlyTheColumnsItsConditionsNeed(String not) {
    Dataset<Row> local = spark.sql(String.format(QUERY, "local_", not));
    Dataset<Row> remote = spark.sql(String.format(QUERY, "remote_", not));
    assertEquals(List.of("order_id", "committed", "received"), itemColumns(local.queryExecution().executedPlan()),
        "the columns spark.read.parquet reads of items");
    assertEquals(List.of("order_id", "committed", "received"), itemColumns(remote.queryExecution().executedPlan()),
        "the columns gpudirect reads of items");
    assertEquals(sorted(local), sorted(remote));
  }

  /** The columns the plan's scan of items reads, in file order. */
  private static List<String> itemColumns(SparkPlan executed) {
    SparkPlan plan = executed instanceof AdaptiveSparkPlanExec a ? a.initialPlan() : executed;
    List<String> columns = new ArrayList<>();
    for (SparkPlan leaf : JavaConverters.seqAsJavaList(plan.collectLeaves())) {
      StructType table = leaf instanceof BatchScanExec b ? b.table().schema()
          : leaf instanceof FileSourceScanExec f ? f.relation().schema() : new StructType();
      if (java.util.Arrays.asList(table.fieldNames()).contains("order_id")) {
        JavaConverters.seqAsJavaList(leaf.output()).forEach(a -> columns.add(a.name()));
      }
    }
    return columns;
  }

  private static List<String> sorted(Dataset<Row> df) {
    return df.collectAsList().stream().map(Row::toString).sorted().toList();
  }
}
