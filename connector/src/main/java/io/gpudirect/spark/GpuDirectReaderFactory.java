package io.gpudirect.spark;

import io.gpudirect.dataset.DataFormat;
import io.gpudirect.gpu.GpuEnvironment;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.remote.RemoteStores;
import io.gpudirect.spark.cudf.NotOnGpuException;
import io.gpudirect.spark.plan.ArrowSlice;
import io.gpudirect.spark.plan.GpuDirectPartition;
import io.gpudirect.spark.plan.ParquetSlice;
import io.gpudirect.spark.read.ArrowSliceReader;
import io.gpudirect.spark.read.GpuArrowSliceReader;
import io.gpudirect.spark.read.GpuParquetSliceReader;
import io.gpudirect.spark.read.ParquetReadSettings;
import io.gpudirect.spark.read.ParquetSliceReaders;
import io.gpudirect.spark.read.SliceReader;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.SerializableConfiguration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs on executors. Arrow is always read as batches; Parquet as batches when Spark's
 * vectorized reader takes the schema, and as rows otherwise, exactly as Spark decides, except
 * that {@code output=gpu} always gives batches, of cuDF columns. Whether a slice is decoded on
 * the GPU is decided here, where the GPU is, by {@link Output}.
 */
final class GpuDirectReaderFactory implements PartitionReaderFactory {
  private static final Logger LOG = LoggerFactory.getLogger(GpuDirectReaderFactory.class);
  /** Reasons already logged in this executor: each is said once, not once per slice. */
  private static final Set<String> FALLBACKS_LOGGED = ConcurrentHashMap.newKeySet();

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
    return parquet == null || parquet.vectorized() || Output.of(options) == Output.GPU;
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    Configuration hadoop = conf.value().value();
    Output output = Output.of(options);
    GpuDirectPartitionReader.Opener<ColumnarBatch> opener;
    if (parquet == null && output.gpuDecodes(DataFormat.ARROW_FILE, GpuEnvironment.get())
        && readSchema.fields().length > 0) {
      opener = slice -> new GpuArrowSliceReader((ArrowSlice) slice, options, readSchema);
    } else if (parquet == null) {
      opener = slice -> new ArrowSliceReader((ArrowSlice) slice, options, readSchema);
    } else if (!output.gpuDecodes(DataFormat.PARQUET, GpuEnvironment.get())) {
      opener = slice -> ParquetSliceReaders.columnar((ParquetSlice) slice, hadoop, parquet);
    } else if (output == Output.GPU) {
      opener = slice -> new GpuParquetSliceReader((ParquetSlice) slice, options, parquet, readSchema);
    } else {
      opener = slice -> gpuOrHost((ParquetSlice) slice, hadoop);
    }
    return new GpuDirectPartitionReader<>((GpuDirectPartition) partition, opener, transport(partition));
  }

  /** output=auto: the GPU decodes what it can serve exactly; the rest is read on the host. */
  private SliceReader<ColumnarBatch> gpuOrHost(ParquetSlice slice, Configuration hadoop) throws Exception {
    try {
      return new GpuParquetSliceReader(slice, options, parquet, readSchema);
    } catch (NotOnGpuException e) {
      // Keyed without the file, which some reasons name: one line per reason, not per file.
      if (FALLBACKS_LOGGED.add(e.getMessage().replace(slice.file().uri().toString(), "<file>"))) {
        LOG.info("gpudirect: {} is read on the host: {}", slice.file().uri(), e.getMessage());
      }
      return ParquetSliceReaders.columnar(slice, hadoop, parquet);
    }
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
