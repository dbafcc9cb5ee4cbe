package io.gpudirect.spark.cudf;

import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostColumnVectorCore;
import ai.rapids.cudf.HostMemoryBuffer;
import java.math.BigDecimal;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A cuDF column in host memory seen through Spark's {@link ColumnVector} getters. Strings are
 * served from the column's own memory ({@link UTF8String#fromAddress}), as Spark's off-heap
 * vectors do, so they stay valid as long as the batch. Nested columns map as cuDF lays them
 * out: LIST is an array, STRUCT a struct, and a map is a LIST of STRUCT(key, value).
 *
 * <p>The view owns nothing: {@link DeviceBatch} owns the host copy and closes it.
 */
final class CudfHostColumn extends ColumnVector {
  private final HostColumnVectorCore column;
  private final CudfHostColumn[] children;
  private final boolean hasNulls;

  CudfHostColumn(DataType sparkType, HostColumnVectorCore column) {
    super(sparkType);
    this.column = column;
    this.hasNulls = column.getNullCount() > 0;
    this.children = children(sparkType, column);
  }

  private static CudfHostColumn[] children(DataType type, HostColumnVectorCore column) {
    if (type instanceof ArrayType a) {
      return new CudfHostColumn[] {new CudfHostColumn(a.elementType(), column.getChildColumnView(0))};
    }
    if (type instanceof MapType m) {
      HostColumnVectorCore entries = column.getChildColumnView(0);
      return new CudfHostColumn[] {
          new CudfHostColumn(m.keyType(), entries.getChildColumnView(0)),
          new CudfHostColumn(m.valueType(), entries.getChildColumnView(1))};
    }
    if (type instanceof StructType s) {
      CudfHostColumn[] fields = new CudfHostColumn[s.fields().length];
      for (int i = 0; i < fields.length; i++) {
        fields[i] = new CudfHostColumn(s.fields()[i].dataType(), column.getChildColumnView(i));
      }
      return fields;
    }
    return new CudfHostColumn[0];
  }

  @Override
  public void close() {
    // DeviceBatch owns the host memory.
  }

  @Override
  public boolean hasNull() {
    return hasNulls;
  }

  @Override
  public int numNulls() {
    return (int) column.getNullCount();
  }

  @Override
  public boolean isNullAt(int rowId) {
    return hasNulls && column.isNull(rowId);
  }

  @Override
  public boolean getBoolean(int rowId) {
    return column.getBoolean(rowId);
  }

  @Override
  public byte getByte(int rowId) {
    return column.getByte(rowId);
  }

  @Override
  public short getShort(int rowId) {
    return column.getShort(rowId);
  }

  @Override
  public int getInt(int rowId) {
    return column.getInt(rowId);
  }

  @Override
  public long getLong(int rowId) {
    return column.getLong(rowId);
  }

  @Override
  public float getFloat(int rowId) {
    return column.getFloat(rowId);
  }

  @Override
  public double getDouble(int rowId) {
    return column.getDouble(rowId);
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    if (isNullAt(rowId)) {
      return null;
    }
    DType.DTypeEnum id = column.getType().getTypeId();
    if (id == DType.DTypeEnum.DECIMAL32) {
      return Decimal.createUnsafe(column.getInt(rowId), precision, scale);
    }
    if (id == DType.DTypeEnum.DECIMAL64) {
      return Decimal.createUnsafe(column.getLong(rowId), precision, scale);
    }
    BigDecimal value = column.getBigDecimal(rowId);
    return Decimal.apply(value, precision, scale);
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    long start = column.getStartListOffset(rowId);
    int length = (int) (column.getEndListOffset(rowId) - start);
    HostMemoryBuffer chars = column.getData();
    // An all-empty string column has no character buffer at all.
    return chars == null ? UTF8String.EMPTY_UTF8 : UTF8String.fromAddress(null, chars.getAddress() + start, length);
  }

  @Override
  public byte[] getBinary(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    long start = column.getStartListOffset(rowId);
    int length = (int) (column.getEndListOffset(rowId) - start);
    byte[] bytes = new byte[length];
    HostMemoryBuffer data = column.getType().equals(DType.STRING) ? column.getData()
        : column.getChildColumnView(0).getData();
    if (length > 0) {
      data.getBytes(bytes, 0, start, length);
    }
    return bytes;
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    int start = (int) column.getStartListOffset(rowId);
    return new ColumnarArray(children[0], start, (int) column.getEndListOffset(rowId) - start);
  }

  @Override
  public ColumnarMap getMap(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    int start = (int) column.getStartListOffset(rowId);
    return new ColumnarMap(children[0], children[1], start, (int) column.getEndListOffset(rowId) - start);
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    return children[ordinal];
  }
}
