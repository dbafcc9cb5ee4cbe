package io.gpudirect.spark;

import java.util.Map;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * {@code spark.read.format("gpudirect").load("gpudirect://host:7337/path")}: the only public
 * class of the source. Everything else is a package-private adapter for one Spark interface.
 */
public final class GpuDirectDataSource implements TableProvider, DataSourceRegister {
  public static final String SHORT_NAME = "gpudirect";

  @Override
  public String shortName() {
    return SHORT_NAME;
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return GpuDirectTable.create(options, null).schema();
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return GpuDirectTable.create(new CaseInsensitiveStringMap(properties), schema);
  }

  /** A schema given with {@code .schema(...)} is used as is. */
  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }
}
