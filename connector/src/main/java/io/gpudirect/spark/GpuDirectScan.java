package io.gpudirect.spark;

import io.gpudirect.dataset.DataFile;
import io.gpudirect.spark.plan.ArrowPlanner;
import io.gpudirect.spark.plan.FileSlice;
import io.gpudirect.spark.plan.ParquetPlanner;
import io.gpudirect.spark.plan.PartitionPacker;
import io.gpudirect.spark.read.ParquetReadSettings;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;

/** Plans partitions from whole row groups or record batches, and reports what it skipped. */
final class GpuDirectScan implements Scan, Batch, SupportsReportStatistics {
  private final ScanContext context;
  private final StructType dataSchema;
  private final StructType readSchema;
  private final Filter[] pushed;
  private final ParquetPlanner.Counts counts = new ParquetPlanner.Counts();
  private InputPartition[] partitions;

  private ScanStatistics statistics;
  /** What explain() adds about the GPU engine's handling of this scan; empty when nothing. */
  private volatile String note;

  GpuDirectScan(ScanContext context, StructType dataSchema, StructType readSchema, Filter[] pushed) {
    this.context = context;
    this.dataSchema = dataSchema;
    this.readSchema = readSchema;
    this.pushed = pushed;
    this.note = rapidsWithoutPassThrough(context.session) ? " note: the RAPIDS Accelerator is on, but "
        + DeviceScans.RAPIDS_EXTENSIONS + " is not in spark.sql.extensions: batches take the plugin's"
        + " host-to-GPU copy" : "";
  }

  /**
   * Whether the RAPIDS Accelerator is configured and our pass-through rule is not. The rule
   * cannot be added from here: a session's columnar rules are fixed when it is made.
   */
  private static boolean rapidsWithoutPassThrough(org.apache.spark.sql.SparkSession session) {
    org.apache.spark.SparkConf conf = session.sparkContext().getConf();
    return conf.get("spark.plugins", "").contains("com.nvidia.spark.SQLPlugin")
        && !conf.get("spark.sql.extensions", "").contains(DeviceScans.RAPIDS_EXTENSIONS);
  }

  Output output() {
    return context.spec.output();
  }

  void note(String n) {
    note = " note: " + n;
  }

  @Override
  public StructType readSchema() {
    return readSchema;
  }

  /** What explain() shows: format, files, pushed filters and the transport that will run. */
  @Override
  public String description() {
    return "GpuDirectScan " + (context.arrow ? "arrow" : "parquet")
        + " servers=[" + context.locationsDescription() + "]"
        + " files=" + context.files.size()
        + " PushedFilters: " + Arrays.toString(pushed)
        + " ReadSchema: " + readSchema.catalogString()
        + " transport=" + context.transportDescription() + note;
  }

  @Override
  public synchronized Statistics estimateStatistics() {
    if (statistics == null) {
      statistics = ScanStatistics.of(context, dataSchema, readSchema);
    }
    return statistics;
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public synchronized InputPartition[] planInputPartitions() {
    if (partitions == null) {
      long target = PartitionPacker.target(context.options.maxPartitionBytes(),
          context.files, minPartitions());
      // Slices list their column chunks for what reads them: read-ahead on the host, and the
      // fetch into device memory before a GPU decode (PrefetchedChunks).
      StructType chunksOf = context.options.readAhead() > 0 || output() != Output.HOST ? readSchema : null;
      List<FileSlice> slices = new ArrayList<>();
      for (DataFile f : context.files) {
        slices.addAll(context.arrow
            ? ArrowPlanner.slice(f, context.options, target)
            : context.parquet().slice(f, Arrays.asList(pushed), target, counts, chunksOf));
      }
      partitions = PartitionPacker.pack(slices, target).toArray(new InputPartition[0]);
    }
    return partitions;
  }

  /** As many partitions as Spark's file sources ask of a scan at least: its cores, by default. */
  private int minPartitions() {
    org.apache.spark.sql.internal.SQLConf conf = context.session.sessionState().conf();
    for (String key : new String[] {"spark.sql.files.minPartitionNum", "spark.sql.leafNodeDefaultParallelism"}) {
      if (conf.contains(key)) {
        return Integer.parseInt(conf.getConfString(key));
      }
    }
    return context.session.sparkContext().defaultParallelism();
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    // Spark calls this for every copy of the scan's plan node, several times per query.
    ParquetReadSettings parquet = context.arrow ? null
        : ParquetReadSettings.from(context.session.sessionState().conf(), readSchema);
    return new GpuDirectReaderFactory(context.broadcastConf(), context.spec, readSchema, parquet);
  }

  @Override
  public CustomMetric[] supportedCustomMetrics() {
    return ScanMetrics.all();
  }

  @Override
  public CustomTaskMetric[] reportDriverMetrics() {
    return new CustomTaskMetric[] {
        ScanMetrics.value(ScanMetrics.ROW_GROUPS_SKIPPED, counts.skipped()),
        ScanMetrics.value(ScanMetrics.ROW_GROUPS_PLANNED, counts.rowGroups())};
  }

  @Override
  public String toString() {
    return description();
  }
}
