package io.gpudirect.spark.read;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.DataSource;
import ai.rapids.cudf.ParquetOptions;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.cudf.PrefetchedChunks;
import io.gpudirect.cudf.RemoteFileDataSource;
import io.gpudirect.gpu.GpuResources;
import io.gpudirect.options.ExecutorSettings;
import io.gpudirect.remote.TaskFetchCounters;
import io.gpudirect.spark.cudf.DeviceBatch;
import io.gpudirect.spark.cudf.NotOnGpuException;
import io.gpudirect.spark.cudf.RowGroupView;
import io.gpudirect.spark.cudf.SparkCudfTypes;
import io.gpudirect.spark.plan.MetadataLookup;
import io.gpudirect.spark.plan.ParquetSlice;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.parquet.format.SchemaElement;
import org.apache.parquet.format.Type;
import org.apache.spark.sql.catalyst.util.RebaseDateTime;
import org.apache.spark.sql.execution.datasources.DataSourceUtils;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A Parquet slice decoded by cuDF on the GPU: only the slice's column chunks cross the wire,
 * straight into device memory (fetched before the decode where there is room,
 * {@link PrefetchedChunks}), and the slice becomes one {@link DeviceBatch}. The batch holds
 * the values Spark's own reader would give, or the slice is refused with
 * {@link NotOnGpuException}: dates that need a calendar rebase, INT96 time-zone conversion,
 * and types without a GPU layout are left to the host reader.
 */
public final class GpuParquetSliceReader extends OneBatchReader {
  public GpuParquetSliceReader(ParquetSlice slice, RemoteStore store, ParquetReadSettings settings,
      StructType readSchema) throws IOException {
    this(slice, store, settings, readSchema, () -> {});
  }

  /**
   * @param admission called once the slice's column chunks are fetched, before anything is
   *     decoded on the GPU: a GPU engine's admission of the task ({@code DeviceHandoff})
   */
  public GpuParquetSliceReader(ParquetSlice slice, RemoteStore store, ParquetReadSettings settings,
      StructType readSchema, Runnable admission) throws IOException {
    GpuResources gpu = GpuResources.shared(ExecutorSettings::gpu);
    RemoteFileDataSource file = new RemoteFileDataSource(store,
        slice.file().uri().path(), slice.file().version(), slice.file().length(), gpu);
    try {
      read(file, slice, settings, readSchema, gpu, admission);
    } finally {
      // cuDF's reads went through the source, not through the channels that count themselves.
      TaskFetchCounters.record(file.fetchedBytes(), file.fetchNanos());
    }
  }

  private void read(RemoteFileDataSource file, ParquetSlice slice, ParquetReadSettings settings,
      StructType readSchema, GpuResources gpu, Runnable admission) throws IOException {
    SliceFooter footer;
    String rebase;
    List<String> present = new ArrayList<>();
    String[] fileNames = new String[readSchema.fields().length];
    try {
      footer = SliceFooter.of(file, slice);
      rebase = rebaseMode(slice, settings, footer, readSchema);
      for (int i = 0; i < fileNames.length; i++) {
        fileNames[i] = fileColumn(footer, readSchema.fields()[i].name());
        if (fileNames[i] != null) {
          present.add(fileNames[i]);
        }
      }
    } catch (IOException | RuntimeException e) {
      file.close();
      throw e;
    }
    if (fileNames.length == 0) {
      // count(*) and the like: the footer knows the rows, nothing need be decoded.
      file.close();
      produced(new ColumnarBatch(new org.apache.spark.sql.vectorized.ColumnVector[0], (int) slice.rows()));
      return;
    }
    DataSource source = present.isEmpty() ? file
        : PrefetchedChunks.fetch(file, slice.chunkRanges(), gpu.prefetch(), "column chunks of " + slice.file().uri());
    try (RowGroupView view = new RowGroupView(source, footer.tail, gpu.host())) {
      admission.run();
      Table decoded;
      if (present.isEmpty()) {
        decoded = null;
      } else {
        ParquetOptions.Builder b = ParquetOptions.builder().withTimeUnit(DType.TIMESTAMP_MICROSECONDS);
        present.forEach(b::includeColumn);
        decoded = Table.readParquet(b.build(), view);
      }
      produced(DeviceBatch.wrap(conform(decoded, fileNames, readSchema, slice.rows(), rebase), readSchema,
          gpu.device(), "decoded Parquet slice of " + slice.file().uri()));
    }
  }

  /**
   * The rebase mode Spark would apply to this slice's dates and timestamps, once it is known
   * that the GPU can honour it: CORRECTED needs nothing, EXCEPTION needs a check of the
   * values, and anything else is refused.
   */
  private static String rebaseMode(ParquetSlice slice, ParquetReadSettings s, SliceFooter footer, StructType schema) {
    boolean datetimes = false;
    for (StructField f : schema.fields()) {
      datetimes |= hasDatetime(f.dataType());
      String name = fileColumn(footer, f.name());
      SchemaElement e = name == null ? null : footer.columns.get(name);
      if (e != null && e.isSetType() && e.getType() == Type.INT96) {
        boolean parquetMr = slice.createdBy() != null && slice.createdBy().startsWith("parquet-mr");
        String int96 = DataSourceUtils.int96RebaseSpec(new MetadataLookup(slice.sparkMetadata()),
            s.int96RebaseModeInRead()).mode().toString();
        if ((s.int96TimestampConversion() && !parquetMr) || !int96.equals("CORRECTED")) {
          throw new NotOnGpuException("INT96 column '" + f.name() + "' needs " + int96
              + " rebasing or a time-zone conversion, which only the host reader does");
        }
      }
    }
    String mode = DataSourceUtils.datetimeRebaseSpec(new MetadataLookup(slice.sparkMetadata()),
        s.datetimeRebaseModeInRead()).mode().toString();
    if (nestedDatetimes(schema) && mode.equals("EXCEPTION")) {
      throw new NotOnGpuException("nested dates or timestamps under rebase mode EXCEPTION are checked"
          + " only by the host reader");
    }
    if (datetimes && mode.equals("LEGACY")) {
      throw new NotOnGpuException(slice.file().uri().toString(),
          "its dates and timestamps need the LEGACY calendar rebase, which only the host reader does");
    }
    return mode;
  }

  private static boolean nestedDatetimes(StructType schema) {
    for (StructField f : schema.fields()) {
      DataType t = f.dataType();
      boolean nested = t instanceof StructType || t instanceof org.apache.spark.sql.types.ArrayType
          || t instanceof org.apache.spark.sql.types.MapType;
      if (nested && hasDatetime(t)) {
        return true;
      }
    }
    return false;
  }

  private static boolean hasDatetime(DataType t) {
    if (t instanceof StructType s) {
      for (StructField f : s.fields()) {
        if (hasDatetime(f.dataType())) {
          return true;
        }
      }
      return false;
    }
    if (t instanceof org.apache.spark.sql.types.ArrayType a) {
      return hasDatetime(a.elementType());
    }
    if (t instanceof org.apache.spark.sql.types.MapType m) {
      return hasDatetime(m.keyType()) || hasDatetime(m.valueType());
    }
    return t instanceof DateType || t instanceof TimestampType || t instanceof TimestampNTZType;
  }

  /** The file's name for a column: the exact name, else the one name equal ignoring case. */
  private static String fileColumn(SliceFooter footer, String name) {
    if (footer.columns.containsKey(name)) {
      return name;
    }
    String found = null;
    for (String n : footer.columns.keySet()) {
      if (n.toLowerCase(Locale.ROOT).equals(name.toLowerCase(Locale.ROOT))) {
        if (found != null) {
          throw new NotOnGpuException("column '" + name + "' matches both '" + found + "' and '" + n + "'");
        }
        found = n;
      }
    }
    return found;
  }

  /**
   * The table in read-schema order: decoded columns widened where Spark widens them, and
   * all-null columns for those the file lacks. Takes ownership of {@code decoded}.
   */
  private static Table conform(Table decoded, String[] fileNames, StructType schema, long rows, String rebase) {
    ColumnVector[] columns = new ColumnVector[fileNames.length];
    try {
      if (decoded != null && decoded.getRowCount() != rows) {
        throw new IllegalStateException("cuDF decoded " + decoded.getRowCount() + " rows of a slice of " + rows);
      }
      int next = 0;
      for (int i = 0; i < columns.length; i++) {
        DataType type = schema.fields()[i].dataType();
        if (fileNames[i] == null) {
          columns[i] = nulls(type, rows);
          continue;
        }
        columns[i] = SparkCudfTypes.conform(schema.fields()[i], decoded.getColumn(next++));
        if (rebase.equals("EXCEPTION")) {
          refuseAncient(schema.fields()[i], columns[i]);
        }
      }
      return new Table(columns);
    } finally {
      if (decoded != null) {
        decoded.close();
      }
      for (ColumnVector c : columns) {
        if (c != null) {
          c.close();
        }
      }
    }
  }

  private static ColumnVector nulls(DataType type, long rows) {
    DType flat = SparkCudfTypes.nullColumnType(type);
    if (flat == null) {
      throw new NotOnGpuException("the file lacks a column of nested type " + type.simpleString());
    }
    try (Scalar none = Scalar.fromNull(flat)) {
      return ColumnVector.fromScalar(none, (int) rows);
    }
  }

  /**
   * Spark's EXCEPTION rebase mode fails a read that meets a date or timestamp before the
   * Gregorian switch in a file that may have been written with the old calendar; so must we.
   */
  private static void refuseAncient(StructField field, ColumnVector c) {
    long limit;
    if (c.getType().equals(DType.TIMESTAMP_DAYS)) {
      limit = RebaseDateTime.lastSwitchJulianDay();
    } else if (c.getType().equals(DType.TIMESTAMP_MICROSECONDS)) {
      limit = RebaseDateTime.lastSwitchJulianTs();
    } else {
      return;
    }
    try (Scalar min = c.min()) {
      if (min.isValid() && (c.getType().equals(DType.TIMESTAMP_DAYS) ? min.getInt() : min.getLong()) < limit) {
        throw new NotOnGpuException("column '" + field.name() + "' holds values before 1582-10-15 and"
            + " spark.sql.parquet.datetimeRebaseModeInRead is EXCEPTION: set it to CORRECTED or LEGACY");
      }
    }
  }
}
