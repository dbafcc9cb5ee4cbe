package io.gpudirect.dataset;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.ParquetOptions;
import ai.rapids.cudf.Table;
import io.gpudirect.GpuDirectException;
import io.gpudirect.arrow.cudf.CudfArrowIpcReader;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.cudf.RemoteFileDataSource;
import io.gpudirect.gpu.GpuEnvironment;
import io.gpudirect.gpu.GpuResources;
import io.gpudirect.options.ExecutorSettings;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.remote.RemoteFileChannel;
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
   * Reads every Parquet or Arrow IPC file below {@code uri} (comma-separated URIs for several
   * servers) into one table on the GPU. Parquet is decoded by cuDF on the device, and only the
   * column chunks of {@code columns} (all columns when none are named) cross the wire;
   * Arrow IPC record-batch bodies land in device memory and become cuDF columns without a
   * decode pass. The caller owns the table. Device buffers gpudirect allocated for it (Arrow
   * bodies under zero-copy columns) stay charged to the JVM's device allocator
   * ({@code GpuResources.device()}) until the table is closed; what cuDF allocated for it
   * (decoded Parquet, converted columns) is the caller's alone.
   *
   * @param options the source's options ({@code streams}, {@code auth.secret}, ...); system
   *     properties {@code spark.gpudirect.*} supply defaults
   */
  public static Table readTable(String uri, Map<String, String> options, String... columns) {
    GpuEnvironment env = GpuEnvironment.get();
    if (!env.gpu() || !env.cudf()) {
      throw new GpuDirectException("GpuDirect.readTable needs a GPU and cuDF: " + env.reason());
    }
    io.gpudirect.options.UnknownOptions.checkReadOptions(options.keySet());
    ResolvedOptions resolved = ResolvedOptions.resolve(options, System::getProperty);
    List<DataFile> files = DatasetListing.list(DatasetListing.locations(List.of(uri), resolved), resolved);
    ParquetOptions.Builder parquet = ParquetOptions.builder();
    for (String c : columns) {
      parquet.includeColumn(c);
    }
    ParquetOptions parquetOptions = parquet.build();
    GpuResources gpu = GpuResources.shared(ExecutorSettings::gpu);
    List<Table> parts = new ArrayList<>();
    try {
      for (DataFile f : files) {
        GpuDirectUri u = f.uri();
        RemoteStore store = RemoteStores.get(u, resolved);
        try (RemoteFileDataSource source = new RemoteFileDataSource(store, u.path(), f.version(), f.length(), gpu)) {
          parts.add(switch (f.format()) {
            case PARQUET -> Table.readParquet(parquetOptions, source);
            case ARROW_FILE, ARROW_STREAM -> new CudfArrowIpcReader(new RemoteFileChannel(store, u.path(), f.version(), f.length()),
                f.length(), u.toString(), f.format() == DataFormat.ARROW_STREAM,
                (offset, dst) -> source.deviceRead(offset, dst, Cuda.DEFAULT_STREAM), gpu.device(), gpu.host())
                .read(columns);
          });
        } catch (RuntimeException e) {
          throw e instanceof GpuDirectException g && u.toString().equals(g.file()) ? e
              : new GpuDirectException(u.toString(), "Cannot read " + u + " onto the GPU: " + e.getMessage(), e);
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
