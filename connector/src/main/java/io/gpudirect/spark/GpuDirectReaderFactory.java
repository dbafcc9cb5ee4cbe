package io.gpudirect.spark;

import io.gpudirect.client.RemoteStore;
import io.gpudirect.dataset.DataFormat;
import io.gpudirect.gpu.GpuEnvironment;
import io.gpudirect.spark.cudf.NotOnGpuException;
import io.gpudirect.spark.plan.ArrowSlice;
import io.gpudirect.spark.plan.FileSlice;
import io.gpudirect.spark.plan.GpuDirectPartition;
import io.gpudirect.spark.plan.ParquetSlice;
import io.gpudirect.spark.read.ArrowSliceReader;
import io.gpudirect.spark.read.GpuArrowSliceReader;
import io.gpudirect.spark.read.GpuParquetSliceReader;
import io.gpudirect.spark.read.ParquetReadSettings;
import io.gpudirect.spark.read.ParquetSliceReaders;
import io.gpudirect.spark.read.PartitionColumns;
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
  private final ReadSpec spec;
  /** What the files are read for: the read schema but for partition columns. */
  private final StructType readSchema;
  /** Null for Arrow scans. */
  private final ParquetReadSettings parquet;
  /** Where partition columns go into what is read; null when the query reads none. */
  private final PartitionColumns partitionColumns;
  /** Set when batches go to a GPU engine in its own form ({@link DeviceScan}); else null. */
  private final DeviceHandoff handoff;

  GpuDirectReaderFactory(Broadcast<SerializableConfiguration> conf, ReadSpec spec,
      StructType readSchema, ParquetReadSettings parquet, PartitionColumns partitionColumns) {
    this(conf, spec, readSchema, parquet, partitionColumns, null);
  }

  private GpuDirectReaderFactory(Broadcast<SerializableConfiguration> conf, ReadSpec spec,
      StructType readSchema, ParquetReadSettings parquet, PartitionColumns partitionColumns, DeviceHandoff handoff) {
    this.conf = conf;
    this.spec = spec;
    this.readSchema = readSchema;
    this.parquet = parquet;
    this.partitionColumns = partitionColumns;
    this.handoff = handoff;
  }

  /**
   * This factory's reads decoded on the GPU where they can be, in the form {@code h} makes.
   * Only for scans that read no partition column (the rule asks {@link DeviceScans} first).
   */
  GpuDirectReaderFactory handingOff(DeviceHandoff h) {
    if (partitionColumns != null) {
      throw new IllegalStateException("partition columns are not handed off");
    }
    return new GpuDirectReaderFactory(conf, spec, readSchema, parquet, null, h);
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return parquet == null || parquet.vectorized() || spec.output() == Output.GPU || handoff != null;
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    Configuration hadoop = conf.value().value();
    if (handoff != null) {
      return new HandoffReader(deviceReader(partition, hadoop), handoff, readSchema);
    }
    Output output = spec.output();
    GpuDirectPartitionReader.Opener<ColumnarBatch> opener;
    if (parquet == null && output.gpuDecodes(DataFormat.ARROW_FILE, GpuEnvironment.get())
        && readSchema.fields().length > 0) {
      opener = slice -> new GpuArrowSliceReader((ArrowSlice) slice, store(slice, hadoop), readSchema);
    } else if (parquet == null) {
      opener = slice -> new ArrowSliceReader((ArrowSlice) slice, store(slice, hadoop), readSchema);
    } else if (!output.gpuDecodes(DataFormat.PARQUET, GpuEnvironment.get())) {
      opener = slice -> ParquetSliceReaders.columnar((ParquetSlice) slice, hadoop, parquet);
    } else if (output == Output.GPU) {
      opener = slice -> new GpuParquetSliceReader((ParquetSlice) slice, store(slice, hadoop), parquet, readSchema);
    } else {
      opener = slice -> gpuOrHost((ParquetSlice) slice, hadoop, () -> {});
    }
    return new GpuDirectPartitionReader<>((GpuDirectPartition) partition, withPartitionColumns(opener, partition),
        transport(partition, hadoop));
  }

  /** {@code opener}'s batches with the partition columns the query reads, where it reads any. */
  private GpuDirectPartitionReader.Opener<ColumnarBatch> withPartitionColumns(
      GpuDirectPartitionReader.Opener<ColumnarBatch> opener, InputPartition partition) {
    if (partitionColumns == null) {
      return opener;
    }
    GpuDirectPartition p = (GpuDirectPartition) partition;
    return slice -> partitionColumns.batches(opener.open(slice), p.values(slice.file()));
  }

  /**
   * Slices decoded on the GPU, whatever option output says (auto or gpu: the rule that made
   * the handoff left output=host alone); Parquet slices the GPU refuses are read on the host,
   * as under output=auto, and the handoff copies them over.
   */
  private PartitionReader<ColumnarBatch> deviceReader(InputPartition partition, Configuration hadoop) {
    GpuDirectPartitionReader.Opener<ColumnarBatch> opener;
    Runnable admission = handoff::beforeGpuWork;
    if (parquet == null) {
      opener = slice -> readSchema.fields().length > 0
          ? new GpuArrowSliceReader((ArrowSlice) slice, store(slice, hadoop), readSchema, admission)
          : new ArrowSliceReader((ArrowSlice) slice, store(slice, hadoop), readSchema);
    } else {
      opener = slice -> gpuOrHost((ParquetSlice) slice, hadoop, admission);
    }
    return new GpuDirectPartitionReader<>((GpuDirectPartition) partition, opener, transport(partition, hadoop));
  }

  private RemoteStore store(FileSlice slice, Configuration hadoop) {
    return spec.store(slice.file().uri(), hadoop);
  }

  /**
   * output=auto: the GPU decodes what it can serve exactly; the rest is read on the host.
   * {@code admission} is called before a GPU decode, never for a slice read on the host.
   */
  private SliceReader<ColumnarBatch> gpuOrHost(ParquetSlice slice, Configuration hadoop, Runnable admission)
      throws Exception {
    try {
      return new GpuParquetSliceReader(slice, store(slice, hadoop), parquet, readSchema, admission);
    } catch (NotOnGpuException e) {
      // One line per reason, not per file.
      if (FALLBACKS_LOGGED.add(e.reason())) {
        LOG.info("gpudirect: {} is read on the host: {}", slice.file().uri(), e.reason());
      }
      return ParquetSliceReaders.columnar(slice, hadoop, parquet);
    }
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    Configuration hadoop = conf.value().value();
    GpuDirectPartition p = (GpuDirectPartition) partition;
    GpuDirectPartitionReader.Opener<InternalRow> opener = partitionColumns == null
        ? slice -> ParquetSliceReaders.rows((ParquetSlice) slice, hadoop, parquet)
        : slice -> partitionColumns.rows(ParquetSliceReaders.rows((ParquetSlice) slice, hadoop, parquet),
            p.values(slice.file()));
    return new GpuDirectPartitionReader<>(p, opener, transport(partition, hadoop));
  }

  private String transport(InputPartition partition, Configuration hadoop) {
    GpuDirectPartition p = (GpuDirectPartition) partition;
    return store(p.slices().get(0), hadoop).transport();
  }
}
