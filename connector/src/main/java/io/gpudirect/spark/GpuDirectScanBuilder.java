package io.gpudirect.spark;

import java.util.List;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;

/**
 * Takes the columns the query needs (only their column chunks are fetched) and the filters it
 * applies (Parquet row groups whose statistics rule them out are never fetched).
 */
final class GpuDirectScanBuilder implements ScanBuilder, SupportsPushDownRequiredColumns, SupportsPushDownFilters {
  private final ScanContext context;
  private final StructType dataSchema;
  private StructType readSchema;
  private Filter[] pushed = new Filter[0];

  GpuDirectScanBuilder(ScanContext context, StructType schema) {
    this.context = context;
    this.dataSchema = schema;
    this.readSchema = schema;
  }

  @Override
  public void pruneColumns(StructType requiredSchema) {
    this.readSchema = requiredSchema;
  }

  /**
   * Row-group skipping is not row filtering, so every filter is also handed back to Spark
   * to evaluate after the scan; the pushed ones are those that convert for Parquet.
   */
  @Override
  public Filter[] pushFilters(Filter[] filters) {
    boolean enabled = !context.arrow && context.options.filterPushdown()
        && context.session.sessionState().conf().parquetFilterPushDown();
    if (enabled) {
      List<Filter> ok = context.parquet().convertible(context.files.get(0), filters);
      pushed = ok.toArray(new Filter[0]);
    }
    return filters;
  }

  @Override
  public Filter[] pushedFilters() {
    return pushed;
  }

  @Override
  public Scan build() {
    return new GpuDirectScan(context, dataSchema, readSchema, pushed);
  }
}
