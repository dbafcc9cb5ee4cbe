package io.gpudirect.bench;

import io.gpudirect.remote.RemoteStores;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import org.apache.spark.sql.execution.exchange.ReusedExchangeExec;
import scala.collection.JavaConverters;

/**
 * A join-heavy query, host mode: a fact table joined to four small dimension tables, filtered
 * and aggregated, once over {@code gpudirect} scans of loopback and once over
 * {@code spark.read.parquet} of the same local files. What it measures is mostly the plan:
 * a scan that reports no size makes Spark sort-merge-join tables it would broadcast.
 */
final class SparkJoins implements AutoCloseable {
  private static final String[] TABLES = {"sales", "customer", "region", "product", "day"};
  private static final String QUERY = "SELECT r.region, p.kind, d.quarter, count(*) AS n, sum(s.amount) AS total"
      + " FROM %1$ssales s"
      + " JOIN %1$scustomer c ON s.customer = c.id"
      + " JOIN %1$sregion r ON c.region = r.id"
      + " JOIN %1$sproduct p ON s.product = p.id"
      + " JOIN %1$sday d ON s.day = d.id"
      + " WHERE p.kind <> 'toy' AND d.quarter IN (1, 2, 4)"
      + " GROUP BY r.region, p.kind, d.quarter";
  private final SparkSession spark;
  private final Path dir;
  private final long bytes;

  SparkJoins(Path work, long factRows) throws IOException {
    spark = BenchSessions.local("gpudirect bench joins", 4, work);
    dir = work.resolve("joins");
    spark.range(0, factRows, 1, 4).selectExpr("id", "cast(id % 5000 AS int) AS customer",
        "cast(id % 200 AS int) AS product", "cast(id % 365 AS int) AS day", "rand(11) * 100 AS amount",
        "concat('order ', id) AS note").write().parquet(dir.resolve("sales").toString());
    spark.range(0, 5000, 1, 1).selectExpr("cast(id AS int) AS id", "concat('customer ', id) AS name",
        "cast(id % 12 AS int) AS region").write().parquet(dir.resolve("customer").toString());
    spark.range(0, 12, 1, 1).selectExpr("cast(id AS int) AS id", "concat('region ', id) AS region")
        .write().parquet(dir.resolve("region").toString());
    spark.range(0, 200, 1, 1).selectExpr("cast(id AS int) AS id",
        "element_at(array('toy','tool','food','book'), cast(id % 4 AS int) + 1) AS kind")
        .write().parquet(dir.resolve("product").toString());
    spark.range(0, 365, 1, 1).selectExpr("cast(id AS int) AS id", "cast(id / 92 AS int) + 1 AS quarter")
        .write().parquet(dir.resolve("day").toString());
    bytes = SparkScan.sizeOf(dir);
  }

  /** Bytes of Parquet in all five tables. */
  long bytes() {
    return bytes;
  }

  /** Registers the tables as views local_* (spark.read.parquet) and remote_* (gpudirect at {@code base}). */
  void register(String base) {
    for (String t : TABLES) {
      spark.read().parquet(dir.resolve(t).toString()).createOrReplaceTempView("local_" + t);
      spark.read().format("gpudirect").load(base + "/joins/" + t).createOrReplaceTempView("remote_" + t);
    }
  }

  Measurement local() throws Exception {
    return time("local_");
  }

  Measurement gpudirect() throws Exception {
    return time("remote_");
  }

  /** Join operators of the last plan over {@code prefix} views, by kind: what the note shows. */
  Map<String, Integer> joins(String prefix) {
    var df = spark.sql(String.format(QUERY, prefix));
    df.collectAsList();
    Map<String, Integer> counts = new TreeMap<>();
    count(df.queryExecution().executedPlan(), counts);
    return counts;
  }

  private Measurement time(String prefix) throws Exception {
    return Measurement.of(() -> {
      spark.sql(String.format(QUERY, prefix)).collectAsList();
      return bytes;
    });
  }

  private static void count(SparkPlan plan, Map<String, Integer> counts) {
    if (plan instanceof AdaptiveSparkPlanExec a) {
      count(a.executedPlan(), counts);
      return;
    }
    if (plan instanceof QueryStageExec q) {
      count(q.plan(), counts);
      return;
    }
    if (plan instanceof ReusedExchangeExec r) {
      count(r.child(), counts);
      return;
    }
    String name = plan.getClass().getSimpleName();
    if (name.endsWith("JoinExec")) {
      counts.merge(name.substring(0, name.length() - "Exec".length()), 1, Integer::sum);
    }
    for (SparkPlan child : JavaConverters.seqAsJavaList(plan.children())) {
      count(child, counts);
    }
  }

  @Override
  public void close() {
    spark.stop();
    RemoteStores.closeAll();
  }
}
