package io.gpudirect.spark;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.gpudirect.GpuDirectException;
import io.gpudirect.dataset.DataFile;
import io.gpudirect.dataset.DatasetListing;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.options.GpuDirectOption;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.options.UnknownOptions;
import io.gpudirect.spark.plan.DirectoryPartitioning;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** The files under the given locations, listed once, with their schema. */
final class GpuDirectTable implements SupportsRead {
  private final ScanContext context;
  private final StructType schema;

  private GpuDirectTable(ScanContext context, StructType schema) {
    this.context = context;
    this.schema = schema;
  }

  static GpuDirectTable create(CaseInsensitiveStringMap options, StructType userSchema) {
    SparkSession session = SparkSession.active();
    UnknownOptions.checkReadOptions(options.asCaseSensitiveMap().keySet());
    UnknownOptions.checkSessionKeys(gpudirectSessionKeys(session));
    ResolvedOptions resolved = ResolvedOptions.resolve(options.asCaseSensitiveMap(),
        key -> session.conf().contains(key) ? session.conf().get(key) : null);
    List<GpuDirectUri> locations = DatasetListing.locations(paths(options), resolved);
    List<DataFile> files = DatasetListing.list(locations, resolved);
    DirectoryPartitioning partitioning = DirectoryPartitioning.discover(files, locations, resolved.basePath(),
        userSchema, session.sessionState().conf());
    ScanContext context = new ScanContext(session, resolved, options, files, partitioning);
    // As Spark's file sources do: a file may say a column is required, the next file may not.
    // A given schema's partition columns go after its others, as Spark places them.
    StructType fileColumns = userSchema != null ? partitioning.dataPart(userSchema, context.caseSensitive())
        : context.inferSchema().asNullable();
    return new GpuDirectTable(context, partitioning.tableSchema(fileColumns, context.caseSensitive()));
  }

  private static List<String> gpudirectSessionKeys(SparkSession session) {
    List<String> keys = new ArrayList<>();
    scala.collection.Iterator<String> all = session.conf().getAll().keysIterator();
    while (all.hasNext()) {
      String key = all.next();
      if (key.startsWith(GpuDirectOption.SESSION_PREFIX)) {
        keys.add(key);
      }
    }
    return keys;
  }

  private static List<String> paths(CaseInsensitiveStringMap options) {
    List<String> paths = new ArrayList<>();
    if (options.containsKey("path")) {
      paths.add(options.get("path"));
    }
    if (options.containsKey("paths")) {
      try {
        for (String p : new ObjectMapper().readValue(options.get("paths"), String[].class)) {
          paths.add(p);
        }
      } catch (java.io.IOException e) {
        throw new GpuDirectException("Invalid option paths: " + e.getMessage(), e);
      }
    }
    return paths;
  }

  @Override
  public String name() {
    return "gpudirect " + context.locationsDescription();
  }

  @Override
  public StructType schema() {
    return schema;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.BATCH_READ);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new GpuDirectScanBuilder(context, schema);
  }
}
