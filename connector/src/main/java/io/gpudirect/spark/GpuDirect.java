package io.gpudirect.spark;

import ai.rapids.cudf.ParquetOptions;
import ai.rapids.cudf.Table;
import io.gpudirect.GpuDirectException;
import io.gpudirect.cudf.RemoteFileDataSource;
import io.gpudirect.gpu.GpuEnvironment;
import io.gpudirect.gpu.GpuResources;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.remote.GpuDirectUri;
import io.gpudirect.remote.RemoteStores;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The Java API for GPU consumers (notebooks, ML pipelines): a dataset straight into one cuDF
 * {@link Table} that never leaves the device. No Spark needed.
 *
 * <pre>{@code
 * try (Table t = GpuDirect.readTable("gpudirect://storage:7337/trips", Map.of("streams", "8"), "amount", "distance")) {
 *   ...
 * }
 * }</pre>
 */
public final class GpuDirect {
  private GpuDirect() {}

  /**
   * Reads every Parquet file below {@code uri} (comma-separated URIs for several servers) into
   * one table on the GPU. cuDF decodes on the device; only the column chunks of
   * {@code columns} (all columns when none are named) cross the wire, straight into device
   * memory. The caller owns the table.
   *
   * @param options the source's options ({@code streams}, {@code auth.secret}, ...); system
   *     properties {@code spark.gpudirect.*} supply defaults
   */
  public static Table readTable(String uri, Map<String, String> options, String... columns) {
    GpuEnvironment env = GpuEnvironment.get();
    if (!env.gpu() || !env.cudf()) {
      throw new GpuDirectException("GpuDirect.readTable needs a GPU and cuDF: " + env.reason());
    }
    ResolvedOptions resolved = ResolvedOptions.resolve(options, System::getProperty);
    List<DataFile> files = DatasetListing.list(DatasetListing.locations(List.of(uri), resolved), resolved);
    ParquetOptions.Builder parquet = ParquetOptions.builder();
    for (String c : columns) {
      parquet.includeColumn(c);
    }
    ParquetOptions parquetOptions = parquet.build();
    GpuResources gpu = GpuResources.shared();
    List<Table> parts = new ArrayList<>();
    try {
      for (DataFile f : files) {
        if (f.format() != DataFormat.PARQUET) {
          throw new GpuDirectException("Cannot read " + f.uri() + " onto the GPU: only Parquet is read into cuDF"
              + " so far; read Arrow IPC with spark.read.format(\"gpudirect\")");
        }
        GpuDirectUri u = f.uri();
        try (RemoteFileDataSource source = new RemoteFileDataSource(RemoteStores.get(u, resolved), u.path(),
            f.length(), gpu.pool(), gpu.engine())) {
          parts.add(Table.readParquet(parquetOptions, source));
        } catch (RuntimeException e) {
          throw e instanceof GpuDirectException && e.getMessage().contains(u.toString()) ? e
              : new GpuDirectException("Cannot read " + u + " onto the GPU: " + e.getMessage(), e);
        }
      }
      if (parts.size() == 1) {
        return parts.remove(0);
      }
      return Table.concatenate(parts.toArray(new Table[0]));
    } finally {
      parts.forEach(Table::close);
    }
  }
}
