package io.gpudirect.spark.tpch;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.sql.execution.SparkPlanInfo;
import org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveExecutionUpdate;
import scala.collection.JavaConverters;

/**
 * What Spark ran for one query, heard while it ran: its jobs and stages with their times and task
 * totals, and every plan adaptive execution went through. The final plan alone can hide where the
 * time went: when a stage comes back empty, adaptive execution replaces the rest of the plan with
 * an empty relation (TPC-H q11 at SF 30 ends as {@code LocalTableScan <empty>}), and the stages
 * that ran before it are gone from it.
 */
final class QueryTimeline extends SparkListener {
  private final long startMs = System.currentTimeMillis();
  private final HostPressure atStart = HostPressure.now();
  private HostPressure atEnd;
  private final List<String> events = new ArrayList<>();
  private final List<SparkPlanInfo> plans = new ArrayList<>();
  private long shuffleWritten;

  @Override
  public synchronized void onJobStart(SparkListenerJobStart start) {
    events.add(String.format(Locale.ROOT, "+%6d ms  job %d starts: stages %s", start.time() - startMs, start.jobId(),
        JavaConverters.seqAsJavaList(start.stageIds())));
  }

  @Override
  public synchronized void onStageCompleted(SparkListenerStageCompleted completed) {
    StageInfo s = completed.stageInfo();
    if (s.submissionTime().isEmpty() || s.completionTime().isEmpty() || s.taskMetrics() == null) {
      return;
    }
    long from = (Long) s.submissionTime().get();
    long to = (Long) s.completionTime().get();
    TaskMetrics m = s.taskMetrics();
    shuffleWritten += m.shuffleWriteMetrics().bytesWritten();
    events.add(String.format(Locale.ROOT, "+%6d ms  stage %d ends after %d ms (from +%d): %d tasks, run %.2f s, CPU %.2f s,"
        + " input %,d B %,d rows, shuffle read %,d B (fetch wait %d ms), shuffle write %,d B; %s", to - startMs,
        s.stageId(), to - from, from - startMs, s.numTasks(), m.executorRunTime() / 1e3, m.executorCpuTime() / 1e9,
        m.inputMetrics().bytesRead(), m.inputMetrics().recordsRead(), m.shuffleReadMetrics().totalBytesRead(),
        m.shuffleReadMetrics().fetchWaitTime(), m.shuffleWriteMetrics().bytesWritten(), s.name()));
  }

  @Override
  public synchronized void onOtherEvent(SparkListenerEvent event) {
    if (event instanceof SparkListenerSQLAdaptiveExecutionUpdate update) {
      plans.add(update.sparkPlanInfo());
    }
  }

  /** Marks the query's end, for {@link #host()}: before anything after it (a collection) adds its own. */
  synchronized void queryEnded() {
    atEnd = HostPressure.now();
  }

  /** Shuffle bytes the query's completed stages wrote: its plan's size, as adaptive execution chose it. */
  synchronized long shuffleWritten() {
    return shuffleWritten;
  }

  /** What the host's kernel did while the query ran ({@link HostPressure}). */
  synchronized String host() {
    return HostPressure.between(atStart, atEnd);
  }

  /** The jobs and stages as they started and ended, in milliseconds from when this began to listen. */
  synchronized List<String> events() {
    return List.copyOf(events);
  }

  /** The plan adaptive execution showed with the most operators: the one before anything was pruned. */
  synchronized java.util.Optional<SparkPlanInfo> fullestPlan() {
    return plans.stream().max(java.util.Comparator.comparingInt(TpchProfile::operators));
  }
}
