package io.gpudirect.spark.rapids;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.server.BlockServer;
import io.gpudirect.spark.LocalSessions;
import java.nio.file.Path;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With the RAPIDS Accelerator's optimizer extension in the session, a star join of gpudirect
 * tables is joined in the order the plugin gives the same join over {@code spark.read.parquet}:
 * the fact table first, then its dimensions (TPC-H's q7: the plugin's rule took V1 relations
 * only). Needs the plugin's jar on the class path, as {@link PassThroughRuleWithPluginTest}; no
 * GPU: the rule is a logical plan rule.
 */
class RapidsJoinReorderTest {
  /** Written with a dimension first, so that Spark's own order (the query's) is not the plugin's. */
  private static final String QUERY = "SELECT n_name, sum(l_price) AS revenue FROM %1$ssupps, %1$slines, %1$scusts,"
      + " %1$snations WHERE s_id = l_supp AND l_cust = c_id AND s_nation = n_id AND c_segment = 'A'"
      + " AND n_name IN ('n1', 'n2') GROUP BY n_name";
  @TempDir
  static Path root;

  private static BlockServer server;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    assumeTrue(RapidsPlugin.version().isPresent(), "skipped: needs the RAPIDS Accelerator jar on the class path");
    spark = LocalSessions.builder("gpudirect-join-reorder", 2)
        .config("spark.rapids.shims-provider-override", "com.nvidia.spark.rapids.shims.spark353.SparkShimServiceProvider")
        .config("spark.sql.extensions", GpuDirectRapidsExtensions.class.getName() + "," + RapidsJoinReorder.PLUGIN_EXTENSION)
        .getOrCreate();
    spark.sql("SELECT id AS l_id, id % 100 AS l_supp, id % 1000 AS l_cust, id * 0.5 AS l_price,"
        + " concat('line ', id) AS l_note FROM range(0, 300000)").write().parquet(root.resolve("lines").toString());
    spark.sql("SELECT id AS s_id, id % 25 AS s_nation, concat('supplier ', id) AS s_name FROM range(0, 100)")
        .write().parquet(root.resolve("supps").toString());
    spark.sql("SELECT id AS c_id, IF(id % 5 = 0, 'A', 'B') AS c_segment FROM range(0, 1000)")
        .write().parquet(root.resolve("custs").toString());
    spark.sql("SELECT id AS n_id, concat('n', id) AS n_name FROM range(0, 25)")
        .write().parquet(root.resolve("nations").toString());
    server = LocalSessions.serveAsViews(spark, root, "lines", "supps", "custs", "nations");
  }

  @AfterAll
  static void stop() {
    LocalSessions.stop(spark, server);
  }

  @Test
  void aStarJoinIsJoinedInThePluginsOrderOverBothReads() {
    Dataset<Row> local = spark.sql(String.format(QUERY, "local_"));
    Dataset<Row> remote = spark.sql(String.format(QUERY, "remote_"));
    String order = joins(local.queryExecution().optimizedPlan());
    assertNotEquals("(((s ⋈ l) ⋈ c) ⋈ n)", order, "the fixture is meant to be reordered by the plugin over local files");
    assertEquals(order, joins(remote.queryExecution().optimizedPlan()), "the join order over gpudirect");
    assertEquals(local.orderBy("n_name").collectAsList(), remote.orderBy("n_name").collectAsList());
  }

  /** The plan's joins as a tree of its tables, each named by its columns' prefix. */
  private static String joins(LogicalPlan plan) {
    if (plan instanceof Join j) {
      return "(" + joins(j.left()) + " ⋈ " + joins(j.right()) + ")";
    }
    if (plan.children().isEmpty()) {
      return plan.output().head().name().substring(0, 1);
    }
    return plan.children().size() == 1 ? joins(plan.children().head()) : plan.nodeName();
  }
}
