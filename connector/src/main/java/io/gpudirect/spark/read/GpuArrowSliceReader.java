package io.gpudirect.spark.read;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.Table;
import io.gpudirect.arrow.cudf.CudfArrowIpcReader;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.cudf.RemoteFileDataSource;
import io.gpudirect.dataset.DataFile;
import io.gpudirect.dataset.DataFormat;
import io.gpudirect.gpu.GpuResources;
import io.gpudirect.options.ExecutorSettings;
import io.gpudirect.remote.RemoteFileChannel;
import io.gpudirect.remote.TaskFetchCounters;
import io.gpudirect.spark.cudf.DeviceBatch;
import io.gpudirect.spark.cudf.SparkCudfTypes;
import io.gpudirect.spark.plan.ArrowSlice;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The record batches of an Arrow slice as one {@link DeviceBatch}: their bodies land in device
 * memory and become cuDF columns without a decode pass ({@link CudfArrowIpcReader}), then
 * columns whose unit differs from Spark's (timestamps, date64, unsigned integers) are
 * converted on the GPU the way Spark's host reader converts them.
 */
public final class GpuArrowSliceReader extends OneBatchReader {
  public GpuArrowSliceReader(ArrowSlice slice, RemoteStore store, StructType readSchema) {
    this(slice, store, readSchema, () -> {});
  }

  /**
   * @param admission called before anything is put on the GPU: a GPU engine's admission of the
   *     task ({@code DeviceHandoff}). The bodies land in device memory as they are fetched, so
   *     unlike a Parquet slice's chunks nothing is fetched before it.
   */
  public GpuArrowSliceReader(ArrowSlice slice, RemoteStore store, StructType readSchema, Runnable admission) {
    admission.run();
    DataFile f = slice.file();
    GpuResources gpu = GpuResources.shared(ExecutorSettings::gpu);
    String[] names = readSchema.fieldNames();
    int count = slice.batchCount() < 0 ? Integer.MAX_VALUE : slice.batchCount();
    Table read;
    RemoteFileDataSource source = new RemoteFileDataSource(store, f.uri().path(), f.version(), f.length(), gpu);
    try (source) {
      read = new CudfArrowIpcReader(new RemoteFileChannel(store, f.uri().path(), f.version(), f.length()), f.length(),
          f.uri().toString(), f.format() == DataFormat.ARROW_STREAM,
          (offset, dst) -> source.deviceRead(offset, dst, Cuda.DEFAULT_STREAM), gpu.device(), gpu.host())
          .read(slice.firstBatch(), count, names);
    } finally {
      // The channel counts the metadata it reads itself; the bodies came through the source.
      TaskFetchCounters.record(source.fetchedBytes(), source.fetchNanos());
    }
    ColumnVector[] columns = new ColumnVector[names.length];
    try (Table decoded = read) {
      for (int i = 0; i < columns.length; i++) {
        columns[i] = SparkCudfTypes.conform(readSchema.fields()[i], decoded.getColumn(i));
      }
      produced(DeviceBatch.wrap(new Table(columns), readSchema, gpu.device(), "Arrow IPC slice of " + f.uri()));
    } finally {
      for (ColumnVector c : columns) {
        if (c != null) {
          c.close();
        }
      }
    }
  }
}
