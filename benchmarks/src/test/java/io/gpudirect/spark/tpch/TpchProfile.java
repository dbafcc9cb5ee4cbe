package io.gpudirect.spark.tpch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlanInfo;
import org.apache.spark.sql.execution.metric.SQLMetricInfo;
import org.apache.spark.sql.execution.ui.SQLAppStatusStore;
import org.apache.spark.sql.execution.ui.SQLExecutionUIData;
import scala.collection.JavaConverters;

/**
 * Where a query's time went, for issue 30's profile: its final plan (after adaptive execution),
 * each operator with the SQL metrics as the Spark UI's SQL tab shows them (totals, and per task
 * the min, median and max), so that the two sides of a query can be set side by side: scan and
 * decode times, partition and file counts, shuffle and broadcast sizes, the GPU semaphore's wait.
 */
final class TpchProfile {
  private static final java.util.regex.Pattern NOTHING = java.util.regex.Pattern.compile("0(\\.0)?( ms| ns| B)?");

  private TpchProfile() {}

  /** Writes {@code executed}'s profile to {@code file}; {@code executed} has run, and was the session's last query. */
  static void write(Dataset<Row> executed, Path file) throws IOException, TimeoutException {
    SparkSession spark = executed.sparkSession();
    spark.sparkContext().listenerBus().waitUntilEmpty(60_000);
    SQLAppStatusStore store = spark.sharedState().statusStore();
    List<SQLExecutionUIData> executions = JavaConverters.seqAsJavaList(store.executionsList());
    long id = executions.stream().mapToLong(SQLExecutionUIData::executionId).max()
        .orElseThrow(() -> new IllegalStateException("Spark's SQL status store has no execution to profile"));
    Map<Object, String> shown = JavaConverters.mapAsJavaMap(store.executionMetrics(id));
    StringBuilder out = new StringBuilder();
    describe(SparkPlanInfo.fromSparkPlan(executed.queryExecution().executedPlan()), shown, "", out);
    Files.createDirectories(file.toAbsolutePath().getParent());
    Files.writeString(file, out);
  }

  private static void describe(SparkPlanInfo node, Map<Object, String> shown, String indent, StringBuilder out) {
    String detail = node.simpleString().replace('\n', ' ');
    out.append(indent).append(detail.length() > 240 ? detail.substring(0, 240) + "…" : detail).append('\n');
    for (SQLMetricInfo m : JavaConverters.seqAsJavaList(node.metrics())) {
      String value = shown.get(m.accumulatorId());
      // Spark shows many counters of features a query does not use (push-based shuffle's, spills): zeros left out.
      if (value != null && !NOTHING.matcher(value).matches()) {
        out.append(indent).append("  | ").append(m.name()).append(": ").append(value.replace('\n', ' ')).append('\n');
      }
    }
    for (SparkPlanInfo child : JavaConverters.seqAsJavaList(node.children())) {
      describe(child, shown, indent + "  ", out);
    }
  }
}
