package io.gpudirect.spark.cudf;

import ai.rapids.cudf.BaseDeviceMemoryBuffer;
import ai.rapids.cudf.ColumnView;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostColumnVector;
import io.gpudirect.GpuDirectException;
import java.util.Optional;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * Which cuDF layout stands for which Spark type, so that a {@link DeviceColumn}'s getters
 * return exactly what Spark's own vectors would. A column whose layout differs is refused by
 * name rather than read wrongly.
 */
public final class SparkCudfTypes {
  private SparkCudfTypes() {}

  /** Throws, naming the column and both types, unless {@code column} can serve {@code field}. */
  static void check(StructField field, ColumnView column) {
    String why = mismatch(field.dataType(), column);
    if (why != null) {
      throw new NotOnGpuException("Column '" + field.name() + "' cannot be served from the GPU as "
          + field.dataType().simpleString() + ": " + why);
    }
  }

  /** Null when {@code column} lays out {@code type} as Spark expects; else why not. */
  public static String mismatch(DataType type, ColumnView column) {
    DType actual = column.getType();
    if (type instanceof ArrayType a) {
      return actual.equals(DType.LIST) ? child(a.elementType(), column, 0) : found(actual, "LIST");
    }
    if (type instanceof MapType m) {
      if (!actual.equals(DType.LIST)) {
        return found(actual, "LIST of STRUCT(key, value)");
      }
      try (ColumnView entries = column.getChildColumnView(0)) {
        if (!entries.getType().equals(DType.STRUCT) || entries.getNumChildren() != 2) {
          return "map entries are " + entries.getType() + ", expected STRUCT(key, value)";
        }
        String keys = child(m.keyType(), entries, 0);
        return keys != null ? keys : child(m.valueType(), entries, 1);
      }
    }
    if (type instanceof StructType s) {
      if (!actual.equals(DType.STRUCT)) {
        return found(actual, "STRUCT");
      }
      if (column.getNumChildren() != s.fields().length) {
        return "the struct has " + column.getNumChildren() + " fields on the GPU and " + s.fields().length + " in Spark";
      }
      for (int i = 0; i < s.fields().length; i++) {
        String why = child(s.fields()[i].dataType(), column, i);
        if (why != null) {
          return "field '" + s.fields()[i].name() + "': " + why;
        }
      }
      return null;
    }
    if (type instanceof DecimalType d) {
      if (!actual.isDecimalType()) {
        return found(actual, "a decimal");
      }
      return actual.getScale() == -d.scale() ? null
          : "scale " + (-actual.getScale()) + " on the GPU, " + d.scale() + " in Spark";
    }
    if (type instanceof BinaryType) {
      // cuDF's Parquet reader gives binary as STRING; the Arrow path gives LIST<UINT8>.
      if (actual.equals(DType.STRING)) {
        return null;
      }
      if (actual.equals(DType.LIST)) {
        try (ColumnView bytes = column.getChildColumnView(0)) {
          if (bytes.getType().equals(DType.UINT8) || bytes.getType().equals(DType.INT8)) {
            return null;
          }
        }
      }
      return found(actual, "STRING or LIST<UINT8> (bytes)");
    }
    DType expected = flatType(type);
    if (expected == null) {
      return "Spark type " + type.simpleString() + " has no GPU layout here";
    }
    return actual.equals(expected) ? null : found(actual, expected.toString());
  }

  /** The cuDF type of a flat Spark type, or null. */
  public static DType flatType(DataType type) {
    if (type instanceof BooleanType) {
      return DType.BOOL8;
    } else if (type instanceof ByteType) {
      return DType.INT8;
    } else if (type instanceof ShortType) {
      return DType.INT16;
    } else if (type instanceof IntegerType) {
      return DType.INT32;
    } else if (type instanceof LongType) {
      return DType.INT64;
    } else if (type instanceof FloatType) {
      return DType.FLOAT32;
    } else if (type instanceof DoubleType) {
      return DType.FLOAT64;
    } else if (type instanceof StringType) {
      return DType.STRING;
    } else if (type instanceof DateType) {
      return DType.TIMESTAMP_DAYS;
    } else if (type instanceof TimestampType || type instanceof TimestampNTZType) {
      return DType.TIMESTAMP_MICROSECONDS;
    } else if (type instanceof NullType) {
      // Every row null; INT8 is how the RAPIDS plugin holds a NullType column.
      return DType.INT8;
    }
    return null;
  }

  /**
   * The cuDF type Spark-on-GPU engines (the RAPIDS Accelerator) hold a decimal of {@code d} in:
   * the narrowest that its precision fits, whatever width a file stored it in.
   */
  public static DType decimalType(DecimalType d) {
    DType.DTypeEnum id = d.precision() <= 9 ? DType.DTypeEnum.DECIMAL32
        : d.precision() <= 18 ? DType.DTypeEnum.DECIMAL64 : DType.DTypeEnum.DECIMAL128;
    return DType.create(id, -d.scale());
  }

  /**
   * {@code strings}' bytes as LIST&lt;UINT8&gt;, the layout GPU engines (the RAPIDS plugin) hold
   * Spark's binary in: the same offsets, validity and bytes, viewed as a list of bytes and copied
   * once on the device. Nothing goes through the host. The caller owns the result.
   */
  public static ai.rapids.cudf.ColumnVector asByteLists(ColumnView strings) {
    long rows = strings.getRowCount();
    if (rows == 0) {
      return ai.rapids.cudf.ColumnVector.empty(
          new HostColumnVector.ListType(true, new HostColumnVector.BasicType(false, DType.UINT8)));
    }
    BaseDeviceMemoryBuffer offsets = strings.getOffsets();
    BaseDeviceMemoryBuffer bytes = strings.getData(); // null when every value is empty or null
    if (offsets == null || offsets.getLength() != (rows + 1) * Integer.BYTES) {
      // cuDF widens a strings column's offsets to 64 bits past 2 GiB of characters; a list's stay 32.
      throw new GpuDirectException("A binary column of " + rows + " rows holds more than 2 GiB of bytes in one"
          + " slice, which the GPU's list of bytes cannot index: read smaller slices (option maxPartitionBytes)");
    }
    try (ColumnView byteView = new ColumnView(DType.UINT8, bytes == null ? 0 : bytes.getLength(), Optional.of(0L),
            bytes, null);
         ColumnView lists = new ColumnView(DType.LIST, rows, Optional.of(strings.getNullCount()), strings.getValid(),
            offsets, new ColumnView[] {byteView})) {
      return lists.copyToColumnVector();
    }
  }

  /** The cuDF type of a column of {@code type} that holds only nulls, or null when nested. */
  public static DType nullColumnType(DataType type) {
    if (type instanceof DecimalType d) {
      return decimalType(d);
    }
    return type instanceof BinaryType ? DType.STRING : flatType(type);
  }

  /**
   * {@code column} as Spark's {@code type} lays it out: a new reference when it already is,
   * else a cast where Spark's own readers convert the same way (unsigned integers widened,
   * timestamps in another unit floored to microseconds, date64 floored to days). Anything
   * else is refused with {@link NotOnGpuException}, naming the column.
   */
  public static ai.rapids.cudf.ColumnVector conform(StructField field, ai.rapids.cudf.ColumnVector column) {
    DataType type = field.dataType();
    if (mismatch(type, column) == null) {
      return column.incRefCount();
    }
    DType actual = column.getType();
    DType target = widening(type, actual);
    if (target == null && actual.isTimestampType()) {
      if (type instanceof TimestampType || type instanceof TimestampNTZType) {
        target = DType.TIMESTAMP_MICROSECONDS;
      } else if (type instanceof DateType) {
        target = DType.TIMESTAMP_DAYS;
      }
    }
    if (target == null) {
      check(field, column);
    }
    return column.castTo(target);
  }

  /**
   * The type a top-level column must be cast to for Spark, or null when it needs no cast:
   * Parquet's unsigned integers arrive unsigned from cuDF, while Spark widens them.
   */
  static DType widening(DataType type, DType actual) {
    if (type instanceof ShortType && actual.equals(DType.UINT8)) {
      return DType.INT16;
    } else if (type instanceof IntegerType && actual.equals(DType.UINT16)) {
      return DType.INT32;
    } else if (type instanceof LongType && actual.equals(DType.UINT32)) {
      return DType.INT64;
    } else if (type instanceof DecimalType d && d.scale() == 0 && actual.equals(DType.UINT64)) {
      return DType.create(DType.DTypeEnum.DECIMAL128, 0);
    }
    return null;
  }

  private static String child(DataType type, ColumnView parent, int index) {
    try (ColumnView c = parent.getChildColumnView(index)) {
      return mismatch(type, c);
    }
  }

  private static String found(DType actual, String expected) {
    return "found " + actual + ", expected " + expected;
  }
}
