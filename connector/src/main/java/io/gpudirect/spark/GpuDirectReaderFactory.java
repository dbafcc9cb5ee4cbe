package io.gpudirect.spark;

import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.remote.RemoteStores;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.SerializableConfiguration;

/**
 * Runs on executors. Arrow is always read as batches; Parquet as batches when Spark's
 * vectorized reader takes the schema, and as rows otherwise, exactly as Spark decides.
 */
final class GpuDirectReaderFactory implements PartitionReaderFactory {
  private final Broadcast<SerializableConfiguration> conf;
  private final ResolvedOptions options;
  private final StructType readSchema;
  /** Null for Arrow scans. */
  private final ParquetReadSettings parquet;

  GpuDirectReaderFactory(Broadcast<SerializableConfiguration> conf, ResolvedOptions options,
      StructType readSchema, ParquetReadSettings parquet) {
    this.conf = conf;
    this.options = options;
    this.readSchema = readSchema;
    this.parquet = parquet;
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return parquet == null || parquet.vectorized();
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    Configuration hadoop = conf.value().value();
    return new GpuDirectPartitionReader<>((GpuDirectPartition) partition, slice -> parquet == null
        ? new ArrowSliceReader((ArrowSlice) slice, options, readSchema)
        : ParquetSliceReaders.columnar((ParquetSlice) slice, hadoop, parquet), transport(partition));
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    Configuration hadoop = conf.value().value();
    return new GpuDirectPartitionReader<>((GpuDirectPartition) partition,
        slice -> ParquetSliceReaders.rows((ParquetSlice) slice, hadoop, parquet), transport(partition));
  }

  private String transport(InputPartition partition) {
    GpuDirectPartition p = (GpuDirectPartition) partition;
    return RemoteStores.get(p.slices().get(0).file().uri(), options).transport();
  }
}
