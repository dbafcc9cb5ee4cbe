package io.gpudirect.spark.read;

import java.io.IOException;
import java.io.Serializable;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.execution.vectorized.ColumnVectorUtils;
import org.apache.spark.sql.execution.vectorized.ConstantColumnVector;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Puts a file's partition values (from its directory names) into what its slice reader gives:
 * the files are read for the other columns only, and each partition column is a constant,
 * where the read schema has it. Every reader (Parquet or Arrow, host or GPU) goes through here,
 * so none of them knows about directories.
 *
 * @param sources for each field of the read schema, the index of the file column it is read
 *     as (0 and up), or {@code -1 - i} for partition column {@code i}
 */
public record PartitionColumns(StructType readSchema, int[] sources) implements Serializable {

  /**
   * @param dataRead the fields of {@code readSchema} that the files are read for, in order
   * @param partitionColumns every partition column, in the order of a file's values
   */
  public static PartitionColumns of(StructType readSchema, StructType dataRead, StructType partitionColumns,
      boolean caseSensitive) {
    int[] sources = new int[readSchema.fields().length];
    int data = 0;
    for (int i = 0; i < sources.length; i++) {
      String name = readSchema.fields()[i].name();
      int p = indexOf(partitionColumns, name, caseSensitive);
      sources[i] = p >= 0 ? -1 - p : data++;
    }
    if (data != dataRead.fields().length) {
      throw new IllegalStateException("read schema " + readSchema.simpleString() + " does not split into "
          + dataRead.simpleString() + " and " + partitionColumns.simpleString());
    }
    return new PartitionColumns(readSchema, sources);
  }

  private static int indexOf(StructType schema, String name, boolean caseSensitive) {
    StructField[] fields = schema.fields();
    for (int i = 0; i < fields.length; i++) {
      if (caseSensitive ? fields[i].name().equals(name) : fields[i].name().equalsIgnoreCase(name)) {
        return i;
      }
    }
    return -1;
  }

  /** Whether the read schema takes any partition column (else readers need no wrapping). */
  public boolean any() {
    for (int s : sources) {
      if (s < 0) {
        return true;
      }
    }
    return false;
  }

  public SliceReader<ColumnarBatch> batches(SliceReader<ColumnarBatch> files, InternalRow values) {
    return new Batches(files, values);
  }

  public SliceReader<InternalRow> rows(SliceReader<InternalRow> files, InternalRow values) {
    return new Rows(files, values);
  }

  /** Batches of the file's columns with a constant vector for each partition column. */
  private final class Batches implements SliceReader<ColumnarBatch> {
    private final SliceReader<ColumnarBatch> files;
    /** One per partition column read, made once: a file's values hold for all its batches. */
    private final ConstantColumnVector[] constants;

    Batches(SliceReader<ColumnarBatch> files, InternalRow values) {
      this.files = files;
      this.constants = new ConstantColumnVector[sources.length];
      for (int i = 0; i < sources.length; i++) {
        if (sources[i] < 0) {
          // A constant's getters ignore the row number; the size is what the batch says.
          constants[i] = new ConstantColumnVector(1, readSchema.fields()[i].dataType());
          ColumnVectorUtils.populate(constants[i], values, -1 - sources[i]);
        }
      }
    }

    @Override
    public boolean next() throws IOException {
      return files.next();
    }

    /**
     * A batch over the file reader's own column vectors, which that reader still owns and
     * closes; only the constants are this reader's.
     */
    @Override
    public ColumnarBatch get() {
      ColumnarBatch read = files.get();
      ColumnVector[] columns = new ColumnVector[sources.length];
      for (int i = 0; i < columns.length; i++) {
        columns[i] = sources[i] < 0 ? constants[i] : read.column(sources[i]);
      }
      return new ColumnarBatch(columns, read.numRows());
    }

    @Override
    public void close() throws IOException {
      for (ConstantColumnVector c : constants) {
        if (c != null) {
          c.close();
        }
      }
      files.close();
    }
  }

  /** Rows of the file's columns and the partition values, in the read schema's order. */
  private final class Rows implements SliceReader<InternalRow> {
    private final SliceReader<InternalRow> files;
    private final Object[] partitionValues;

    Rows(SliceReader<InternalRow> files, InternalRow values) {
      this.files = files;
      this.partitionValues = new Object[sources.length];
      for (int i = 0; i < sources.length; i++) {
        if (sources[i] < 0) {
          int p = -1 - sources[i];
          partitionValues[i] = values.isNullAt(p) ? null : values.get(p, readSchema.fields()[i].dataType());
        }
      }
    }

    @Override
    public boolean next() throws IOException {
      return files.next();
    }

    /** Spark copies each row into its own form before it asks for the next. */
    @Override
    public InternalRow get() {
      InternalRow read = files.get();
      Object[] out = new Object[sources.length];
      for (int i = 0; i < out.length; i++) {
        int s = sources[i];
        out[i] = s < 0 ? partitionValues[i]
            : read.isNullAt(s) ? null : read.get(s, readSchema.fields()[i].dataType());
      }
      return new GenericInternalRow(out);
    }

    @Override
    public void close() throws IOException {
      files.close();
    }
  }
}
