package io.gpudirect.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gpudirect.server.BlockServer;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import org.apache.spark.sql.execution.exchange.ReusedExchangeExec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import scala.collection.JavaConverters;

/**
 * Where a query reads the same table twice in the same way, Spark runs the shared part once and
 * reuses its exchange, over a gpudirect table as over {@code spark.read.parquet}: two scans are
 * equal when they read the same files for the same columns with the same filters, in whatever
 * order the query wrote them. (Each scan was equal only to itself: TPC-H's q2, q7 and q11 read
 * their small tables twice over gpudirect and once over local files.)
 */
class ScanReuseTest {
  /** The same aggregate twice; its filters commuted in the second, as TPC-H's q7 writes its nations. */
  private static final String QUERY = "SELECT small, count(*) AS n FROM %1$s WHERE note = 'comment 7' OR key < 500"
      + " GROUP BY small UNION ALL SELECT small, count(*) AS n FROM %1$s WHERE key < 500 OR note = 'comment 7'"
      + " GROUP BY small";
  @TempDir
  static Path root;

  private static BlockServer server;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = LocalSessions.builder("gpudirect-scan-reuse", 2).getOrCreate();
    spark.sql("SELECT id AS key, CAST(id % 7 AS INT) AS small, concat('comment ', id) AS note FROM range(0, 5000)")
        .repartition(2).write().parquet(root.resolve("t").toString());
    server = LocalSessions.serveAsViews(spark, root, "t");
  }

  @AfterAll
  static void stop() {
    LocalSessions.stop(spark, server);
  }

  @ParameterizedTest(name = "adaptive execution {0}")
  @ValueSource(booleans = {false, true})
  void aTableReadTwiceAlikeIsReadOnce(boolean adaptive) {
    spark.conf().set("spark.sql.adaptive.enabled", Boolean.toString(adaptive));
    try {
      Dataset<Row> local = spark.sql(String.format(QUERY, "local_t"));
      Dataset<Row> remote = spark.sql(String.format(QUERY, "remote_t"));
      // Collected as they are, so that the adaptive plans checked below are the ones that ran.
      assertEquals(sorted(local.collectAsList()), sorted(remote.collectAsList()));
      assertEquals(1, reused(local.queryExecution().executedPlan()), "the fixture is meant to reuse an exchange");
      assertEquals(1, reused(remote.queryExecution().executedPlan()), "exchanges reused over gpudirect");
    } finally {
      spark.conf().unset("spark.sql.adaptive.enabled");
    }
  }

  private static List<String> sorted(List<Row> rows) {
    return rows.stream().map(Row::toString).sorted().toList();
  }

  /** Reused exchanges in the plan that ran, looking into adaptive stages. */
  private static int reused(SparkPlan plan) {
    if (plan instanceof AdaptiveSparkPlanExec a) {
      return reused(a.executedPlan());
    }
    if (plan instanceof QueryStageExec s) {
      return reused(s.plan());
    }
    int n = plan instanceof ReusedExchangeExec ? 1 : 0;
    for (SparkPlan child : JavaConverters.seqAsJavaList(plan.children())) {
      n += reused(child);
    }
    return n;
  }
}
