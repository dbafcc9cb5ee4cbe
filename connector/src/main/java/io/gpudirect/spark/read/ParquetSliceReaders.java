package io.gpudirect.spark.read;

import io.gpudirect.hadoop.ExpectedVersion;
import io.gpudirect.hadoop.ReadPlan;
import io.gpudirect.spark.plan.MetadataLookup;
import io.gpudirect.spark.plan.ParquetSlice;
import java.io.IOException;
import java.time.ZoneId;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapred.FileSplit;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.RecordReader;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.parquet.hadoop.ParquetInputFormat;
import org.apache.parquet.hadoop.ParquetRecordReader;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.RebaseDateTime;
import org.apache.spark.sql.execution.datasources.DataSourceUtils;
import org.apache.spark.sql.execution.datasources.parquet.ParquetReadSupport;
import org.apache.spark.sql.execution.datasources.parquet.VectorizedParquetRecordReader;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.Option;

/**
 * Opens Spark's own Parquet readers (vectorized, or row-based for schemas the vectorized
 * reader does not take) over a slice on the gpudirect:// file system, set up exactly as
 * Spark's Parquet source sets them up, so values come out as spark.read.parquet gives them.
 */
public final class ParquetSliceReaders {
  private ParquetSliceReaders() {}

  public static SliceReader<ColumnarBatch> columnar(ParquetSlice slice, Configuration conf, ParquetReadSettings s)
      throws IOException, InterruptedException {
    RebaseDateTime.RebaseSpec datetime = datetimeRebase(slice, s);
    RebaseDateTime.RebaseSpec int96 = int96Rebase(slice, s);
    VectorizedParquetRecordReader reader = new VectorizedParquetRecordReader(convertTz(slice, s),
        datetime.mode().toString(), datetime.timeZone(), int96.mode().toString(), int96.timeZone(),
        s.offHeap() && TaskContext.get() != null, s.batchSize());
    try {
      reader.initialize(split(slice), context(slice, conf, s));
      reader.initBatch(new StructType(), InternalRow.empty());
      reader.enableReturningBatches();
    } catch (IOException | InterruptedException | RuntimeException e) {
      reader.close();
      throw e;
    }
    return new Adapter<>(reader, ColumnarBatch.class);
  }

  public static SliceReader<InternalRow> rows(ParquetSlice slice, Configuration conf, ParquetReadSettings s)
      throws IOException, InterruptedException {
    ParquetReadSupport support = new ParquetReadSupport(Option.apply(convertTz(slice, s)), false,
        datetimeRebase(slice, s), int96Rebase(slice, s));
    ParquetRecordReader<InternalRow> reader = new ParquetRecordReader<>(support);
    try {
      reader.initialize(split(slice), context(slice, conf, s));
    } catch (IOException | InterruptedException | RuntimeException e) {
      reader.close();
      throw e;
    }
    return new Adapter<>(reader, InternalRow.class);
  }

  /** Spark 3.5's Parquet readers take the old-API split (which is also a new-API InputSplit). */
  private static FileSplit split(ParquetSlice slice) {
    return new FileSplit(new Path(slice.file().uri().toString()), slice.start(), slice.length(), new String[0]);
  }

  private static TaskAttemptContextImpl context(ParquetSlice slice, Configuration shared, ParquetReadSettings s) {
    // The broadcast conf is shared by every task of the executor, and by every scan of the
    // table: copy before adding this scan's settings and this slice's predicate.
    Configuration conf = new Configuration(shared);
    s.applyTo(conf);
    if (slice.predicate() != null) {
      ParquetInputFormat.setFilterPredicate(conf, slice.predicate());
    }
    // The version the driver listed: the stream Parquet opens reads that one or fails.
    ExpectedVersion.set(conf, slice.file().uri().toString(), slice.file().version());
    if (slice.chunkRanges() != null && slice.chunkRanges().length > 0) {
      // What the reader will fetch, so that the stream it opens can fetch it ahead.
      new ReadPlan(slice.file().uri().toString(), slice.chunkRanges()).set(conf);
    }
    return new TaskAttemptContextImpl(conf, new TaskAttemptID(new TaskID(new JobID(), TaskType.MAP, 0), 0));
  }

  /** INT96 values are converted to the session zone only when a writer other than parquet-mr wrote them. */
  private static ZoneId convertTz(ParquetSlice slice, ParquetReadSettings s) {
    boolean parquetMr = slice.createdBy() != null && slice.createdBy().startsWith("parquet-mr");
    return s.int96TimestampConversion() && !parquetMr ? ZoneId.of(s.sessionTimeZone()) : null;
  }

  private static RebaseDateTime.RebaseSpec datetimeRebase(ParquetSlice slice, ParquetReadSettings s) {
    return DataSourceUtils.datetimeRebaseSpec(new MetadataLookup(slice.sparkMetadata()), s.datetimeRebaseModeInRead());
  }

  private static RebaseDateTime.RebaseSpec int96Rebase(ParquetSlice slice, ParquetReadSettings s) {
    return DataSourceUtils.int96RebaseSpec(new MetadataLookup(slice.sparkMetadata()), s.int96RebaseModeInRead());
  }

  /** A Hadoop record reader seen as a slice reader. */
  private static final class Adapter<T> implements SliceReader<T> {
    private final RecordReader<Void, ?> reader;
    private final Class<T> type;

    Adapter(RecordReader<Void, ?> reader, Class<T> type) {
      this.reader = reader;
      this.type = type;
    }

    @Override
    public boolean next() throws IOException {
      try {
        return reader.nextKeyValue();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("Interrupted while reading Parquet");
      }
    }

    @Override
    public T get() {
      try {
        return type.cast(reader.getCurrentValue());
      } catch (IOException | InterruptedException e) {
        throw new IllegalStateException(e);
      }
    }

    @Override
    public void close() throws IOException {
      reader.close();
    }
  }
}
