package io.gpudirect.spark;

import io.gpudirect.dataset.DataFile;
import io.gpudirect.spark.plan.ArrowPlanner;
import io.gpudirect.spark.plan.FileSlice;
import io.gpudirect.spark.plan.GpuDirectPartition;
import io.gpudirect.spark.plan.PartitionFilters;
import io.gpudirect.spark.plan.ParquetPlanner;
import io.gpudirect.spark.plan.PartitionPacker;
import io.gpudirect.spark.read.ParquetReadSettings;
import io.gpudirect.spark.read.PartitionColumns;
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
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;

/** Plans partitions from whole row groups or record batches, and reports what it skipped. */
final class GpuDirectScan implements Scan, Batch, SupportsReportStatistics {
  private final ScanContext context;
  private final StructType tableSchema;
  private final StructType readSchema;
  /** The fields of the read schema that the files are read for: all but the partition columns. */
  private final StructType dataRead;
  private final Filter[] pushed;
  private final Filter[] partitionFilters;
  /** The filters as {@link #equals} compares them, whatever order the query wrote them in. */
  private final List<Object> canonicalFilters;
  private List<DataFile> files;
  private final ParquetPlanner.Counts counts = new ParquetPlanner.Counts();
  private InputPartition[] partitions;
  /** The partitions when the batches are handed to the GPU engine: see {@link #partitions(boolean)}. */
  private InputPartition[] gpuPartitions;

  private ScanStatistics statistics;
  /** What explain() adds about the GPU engine's handling of this scan; empty when nothing. */
  private volatile String note;

  GpuDirectScan(ScanContext context, StructType tableSchema, StructType readSchema, Filter[] pushed,
      Filter[] partitionFilters) {
    this.context = context;
    this.tableSchema = tableSchema;
    this.readSchema = readSchema;
    this.dataRead = context.partitioning.dataPart(readSchema, context.caseSensitive());
    this.pushed = pushed;
    this.partitionFilters = partitionFilters;
    this.canonicalFilters = List.of(CanonicalFilters.of(pushed), CanonicalFilters.of(partitionFilters));
    this.note = DeviceScans.setupNote(context.session.sparkContext().getConf());
  }

  Output output() {
    return context.spec.output();
  }

  /** Whether the query reads a partition column, whose values come from directory names. */
  boolean readsPartitionColumns() {
    return dataRead.fields().length != readSchema.fields().length;
  }

  /** The files whose directories the partition filters do not rule out: what is read. */
  synchronized List<DataFile> files() {
    if (files == null) {
      if (context.partitioning.isEmpty() || partitionFilters.length == 0) {
        files = context.files;
      } else {
        files = new ArrayList<>();
        for (DataFile f : context.files) {
          if (PartitionFilters.mayMatch(partitionFilters, context.partitioning.columns(),
              context.partitioning.values(f), context.caseSensitive())) {
            files.add(f);
          }
        }
      }
    }
    return files;
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
        + " files=" + files().size()
        + (files().size() == context.files.size() ? "" : " (of " + context.files.size() + " listed)")
        + (context.partitioning.isEmpty() ? "" : " PartitionColumns: " + context.partitioning.columns().catalogString())
        + " PartitionFilters: " + Arrays.toString(partitionFilters)
        + " PushedFilters: " + Arrays.toString(pushed)
        + " ReadSchema: " + readSchema.catalogString()
        + " transport=" + context.transportDescription() + note;
  }

  @Override
  public synchronized Statistics estimateStatistics() {
    if (statistics == null) {
      statistics = ScanStatistics.of(context, tableSchema, readSchema);
    }
    return statistics;
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    return partitions(false);
  }

  /**
   * The scan's partitions: slices packed toward Spark's split size ({@link PartitionPacker#target}).
   * A slice is a run of consecutive row groups (record batches), cut at that size for the host
   * reader, which decodes a slice on the task's core, so finer slices spread a small scan over
   * every core. {@code handedToGpu} (the scan's batches go to the RAPIDS Accelerator as device
   * batches) cuts runs at maxPartitionBytes instead: the GPU decodes a slice in one call into
   * one batch, and pays per call, per batch and per task, not per core. At SF 30 on the lab's
   * H100, TPC-H's partsupp (12 files of three row groups, 103 MiB each) cut at the share made 24
   * slices and 24 tasks on 16 cores, whose scan stages took 716 and 485 ms where the plugin's
   * own scan of the files took 458 and 329 ms in 16 tasks; whole files, 12 slices and 12 tasks,
   * took 341 and 265 ms (docs/benchmarks.md, "q11 at SF 30").
   */
  synchronized InputPartition[] partitions(boolean handedToGpu) {
    InputPartition[] planned = handedToGpu ? gpuPartitions : partitions;
    if (planned == null) {
      SQLConf conf = context.session.sessionState().conf();
      // Spark's own settings unless the read's option says otherwise, as its file sources follow them.
      long maxPartitionBytes = context.options.maxPartitionBytes().orElse(conf.filesMaxPartitionBytes());
      long openCost = conf.filesOpenCostInBytes();
      long target = PartitionPacker.target(maxPartitionBytes, openCost, files(), minPartitions());
      long sliceTarget = handedToGpu ? maxPartitionBytes : target;
      // Slices list their column chunks for what reads them: read-ahead on the host, and the
      // fetch into device memory before a GPU decode (PrefetchedChunks).
      StructType chunksOf = context.options.readAhead() > 0 || output() != Output.HOST ? dataRead : null;
      // The row groups planned and skipped are the scan's, counted once whichever way it planned first.
      ParquetPlanner.Counts counting = (handedToGpu ? partitions : gpuPartitions) == null ? counts
          : new ParquetPlanner.Counts();
      List<FileSlice> slices = new ArrayList<>();
      for (DataFile f : files()) {
        slices.addAll(context.arrow
            ? ArrowPlanner.slice(f, context.options, sliceTarget)
            : context.parquet().slice(f, Arrays.asList(pushed), sliceTarget, counting, chunksOf));
      }
      List<GpuDirectPartition> packed = PartitionPacker.pack(slices, target, openCost);
      if (!context.partitioning.isEmpty()) {
        packed.replaceAll(p -> p.withValuesOf(context.partitioning));
      }
      planned = packed.toArray(new InputPartition[0]);
      if (handedToGpu) {
        gpuPartitions = planned;
      } else {
        partitions = planned;
      }
    }
    return planned;
  }

  /** As many partitions as Spark's file sources ask of a scan at least: its cores, by default. */
  private int minPartitions() {
    SQLConf conf = context.session.sessionState().conf();
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
        : ParquetReadSettings.from(context.session.sessionState().conf(), dataRead);
    PartitionColumns partitionColumns = readsPartitionColumns()
        ? PartitionColumns.of(readSchema, dataRead, context.partitioning.columns(), context.caseSensitive())
        : null;
    return new GpuDirectReaderFactory(context.broadcastConf(), context.spec, dataRead, parquet, partitionColumns);
  }

  @Override
  public CustomMetric[] supportedCustomMetrics() {
    return ScanMetrics.all();
  }

  @Override
  public CustomTaskMetric[] reportDriverMetrics() {
    return new CustomTaskMetric[] {
        ScanMetrics.value(ScanMetrics.ROW_GROUPS_SKIPPED, counts.skipped()),
        ScanMetrics.value(ScanMetrics.ROW_GROUPS_PLANNED, counts.rowGroups()),
        ScanMetrics.value(ScanMetrics.FILES_READ, files().size()),
        ScanMetrics.value(ScanMetrics.FILES_PRUNED, context.files.size() - files().size())};
  }

  /**
   * The same read: the same table (the files one load listed, with its options), columns and
   * filters, the filters in any order. Spark compares scans so to run a part of a plan that a
   * query holds twice once, and reuse its exchange or subquery (its own file scans compare
   * their file index, read schema and canonical filters); equal only to itself, a gpudirect
   * table was read as often as a query named it.
   */
  @Override
  public boolean equals(Object o) {
    return o instanceof GpuDirectScan other && context == other.context && readSchema.equals(other.readSchema)
        && canonicalFilters.equals(other.canonicalFilters);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(System.identityHashCode(context), readSchema, canonicalFilters);
  }

  @Override
  public String toString() {
    return description();
  }
}
