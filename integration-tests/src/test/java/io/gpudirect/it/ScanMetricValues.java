package io.gpudirect.it;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.ui.SQLAppStatusStore;
import org.apache.spark.sql.execution.ui.SQLExecutionUIData;
import scala.collection.JavaConverters;

/** The gpudirect scan's metric values after a query ran, as the SQL tab shows them (raw values). */
final class ScanMetricValues {
  private ScanMetricValues() {}

  static Map<String, Long> of(Dataset<Row> executed) {
    Map<String, Long> values = new HashMap<>();
    collect(executed.queryExecution().executedPlan(), values);
    return values;
  }

  /**
   * The values the SQL tab of the Spark UI shows for the scan's metrics, by metric name,
   * read from Spark's SQL status store after the query's events are processed.
   */
  static Map<String, String> displayed(Dataset<Row> executed) throws java.util.concurrent.TimeoutException {
    SparkSession spark = executed.sparkSession();
    Map<String, Long> ids = new HashMap<>();
    collectIds(executed.queryExecution().executedPlan(), ids);
    spark.sparkContext().listenerBus().waitUntilEmpty();
    SQLAppStatusStore store = spark.sharedState().statusStore();
    List<SQLExecutionUIData> executions = JavaConverters.seqAsJavaList(store.executionsList());
    for (int i = executions.size() - 1; i >= 0; i--) {
      Map<Object, String> shown = JavaConverters.mapAsJavaMap(store.executionMetrics(executions.get(i).executionId()));
      Map<String, String> byName = new HashMap<>();
      ids.forEach((name, id) -> {
        if (shown.containsKey(id)) {
          byName.put(name, shown.get(id));
        }
      });
      if (!byName.isEmpty()) {
        return byName;
      }
    }
    return Map.of();
  }

  private static void collectIds(SparkPlan plan, Map<String, Long> ids) {
    if (plan instanceof BatchScanExec) {
      JavaConverters.mapAsJavaMap(plan.metrics()).forEach((k, v) -> ids.put(k, v.id()));
    }
    for (SparkPlan child : JavaConverters.seqAsJavaList(plan.children())) {
      collectIds(child, ids);
    }
  }

  private static void collect(SparkPlan plan, Map<String, Long> values) {
    if (plan instanceof BatchScanExec) {
      Map<String, SQLMetric> metrics = JavaConverters.mapAsJavaMap(plan.metrics());
      metrics.forEach((k, v) -> values.merge(k, v.value(), Long::sum));
    }
    for (SparkPlan child : JavaConverters.seqAsJavaList(plan.children())) {
      collect(child, values);
    }
  }
}
