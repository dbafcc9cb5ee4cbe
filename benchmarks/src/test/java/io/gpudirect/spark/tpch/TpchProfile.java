package io.gpudirect.spark.tpch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlanInfo;
import org.apache.spark.sql.execution.metric.SQLMetricInfo;
import org.apache.spark.sql.execution.ui.SQLAppStatusStore;
import org.apache.spark.sql.execution.ui.SQLExecutionUIData;
import scala.collection.JavaConverters;

/**
 * Where a query's time went, for issue 30's profile: the driver's planning phases, the jobs and
 * stages that ran ({@link QueryTimeline}), and its final plan (after adaptive execution), each
 * operator with the SQL metrics as the Spark UI's SQL tab shows them (totals, and per task the min,
 * median and max), so that the two sides of a query can be set side by side: scan and decode
 * times, partition and file counts, shuffle and broadcast sizes, the GPU semaphore's wait. Where
 * adaptive execution pruned the plan it ran (a stage that came back empty), also the fullest plan it
 * went through, whose operators hold the metrics of the stages that ran.
 */
final class TpchProfile {
  private static final java.util.regex.Pattern NOTHING = java.util.regex.Pattern.compile("0(\\.0)?( ms| ns| B)?");

  private TpchProfile() {}

  /**
   * Writes {@code executed}'s profile to {@code file}; {@code executed} has run, was the session's
   * last query, and Spark's listeners have heard all of it.
   */
  static void write(Dataset<Row> executed, QueryTimeline timeline, Path file) throws IOException {
    SparkSession spark = executed.sparkSession();
    SQLAppStatusStore store = spark.sharedState().statusStore();
    List<SQLExecutionUIData> executions = JavaConverters.seqAsJavaList(store.executionsList());
    long id = executions.stream().mapToLong(SQLExecutionUIData::executionId).max()
        .orElseThrow(() -> new IllegalStateException("Spark's SQL status store has no execution to profile"));
    Map<Object, String> shown = JavaConverters.mapAsJavaMap(store.executionMetrics(id));
    StringBuilder out = new StringBuilder("planning:");
    JavaConverters.mapAsJavaMap(executed.queryExecution().tracker().phases())
        .forEach((phase, summary) -> out.append(' ').append(phase).append(' ').append(summary.durationMs()).append(" ms"));
    out.append('\n').append(timeline.host());
    out.append("\n\njobs and stages (from the query's start):\n");
    timeline.events().forEach(e -> out.append("  ").append(e).append('\n'));
    out.append("\nfinal plan:\n");
    SparkPlanInfo last = SparkPlanInfo.fromSparkPlan(executed.queryExecution().executedPlan());
    describe(last, shown, "", out);
    timeline.fullestPlan().filter(p -> operators(p) > operators(last)).ifPresent(fullest -> {
      out.append("\nthe fullest plan adaptive execution went through (").append(operators(fullest))
          .append(" operators; the final one has ").append(operators(last)).append("):\n");
      describe(fullest, shown, "", out);
    });
    Files.createDirectories(file.toAbsolutePath().getParent());
    Files.writeString(file, out);
  }

  static int operators(SparkPlanInfo plan) {
    return 1 + JavaConverters.seqAsJavaList(plan.children()).stream().mapToInt(TpchProfile::operators).sum();
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
