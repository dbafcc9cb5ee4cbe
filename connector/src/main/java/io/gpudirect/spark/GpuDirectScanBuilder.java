package io.gpudirect.spark;

import io.gpudirect.spark.plan.PartitionFilters;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;

/**
 * Takes the columns the query needs (only their column chunks are fetched) and the filters it
 * applies: filters on partition columns leave out the files whose directories rule them out,
 * and Parquet row groups whose statistics rule the others out are never fetched.
 */
final class GpuDirectScanBuilder implements ScanBuilder, SupportsPushDownRequiredColumns, SupportsPushDownFilters {
  private final ScanContext context;
  private final StructType tableSchema;
  private StructType readSchema;
  private Filter[] parquetFilters = new Filter[0];
  private Filter[] partitionFilters = new Filter[0];

  GpuDirectScanBuilder(ScanContext context, StructType schema) {
    this.context = context;
    this.tableSchema = schema;
    this.readSchema = schema;
  }

  @Override
  public void pruneColumns(StructType requiredSchema) {
    this.readSchema = requiredSchema;
  }

  /**
   * Neither pruning files nor skipping row groups is row filtering, so every filter is also
   * handed back to Spark to evaluate after the scan. The pushed ones are those that prune files
   * and those that convert for Parquet; a filter on a partition column never goes to Parquet,
   * even where a file also holds a column of that name (the directory's value is the column's).
   */
  @Override
  public Filter[] pushFilters(Filter[] filters) {
    List<Filter> onDirectories = new ArrayList<>();
    List<Filter> onFiles = new ArrayList<>();
    for (Filter f : filters) {
      if (PartitionFilters.onPartitionColumnsOnly(f, context.partitioning.columns(), context.caseSensitive())) {
        onDirectories.add(f);
      } else if (!mentionsPartitionColumn(f)) {
        onFiles.add(f);
      }
    }
    partitionFilters = onDirectories.toArray(new Filter[0]);
    boolean parquetPushdown = !context.arrow && context.options.filterPushdown()
        && context.session.sessionState().conf().parquetFilterPushDown();
    if (parquetPushdown && !onFiles.isEmpty()) {
      parquetFilters = context.parquet().convertible(context.files.get(0), onFiles.toArray(new Filter[0]))
          .toArray(new Filter[0]);
    }
    return filters;
  }

  private boolean mentionsPartitionColumn(Filter f) {
    for (String r : f.references()) {
      if (context.partitioning.isColumn(r, context.caseSensitive())) {
        return true;
      }
    }
    return false;
  }

  @Override
  public Filter[] pushedFilters() {
    Filter[] all = java.util.Arrays.copyOf(partitionFilters, partitionFilters.length + parquetFilters.length);
    System.arraycopy(parquetFilters, 0, all, partitionFilters.length, parquetFilters.length);
    return all;
  }

  @Override
  public Scan build() {
    return new GpuDirectScan(context, tableSchema, readSchema, parquetFilters, partitionFilters);
  }
}
