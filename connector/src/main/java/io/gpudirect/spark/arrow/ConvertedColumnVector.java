package io.gpudirect.spark.arrow;

import org.apache.arrow.vector.ValueVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A Spark column over an Arrow vector that has no Spark twin: values are converted on
 * access, so the Arrow buffers are still the only copy. Subclasses override the getters
 * of their Spark type; the rest are not called by Spark for that type.
 *
 * <p>The Arrow vector belongs to the reader, which validated it before wrapping; closing
 * this column releases nothing.
 */
abstract class ConvertedColumnVector extends ColumnVector {
  final ValueVector vector;

  ConvertedColumnVector(DataType type, ValueVector vector) {
    super(type);
    this.vector = vector;
  }

  @Override
  public void close() {}

  @Override
  public boolean hasNull() {
    return numNulls() > 0;
  }

  @Override
  public int numNulls() {
    return vector.getNullCount();
  }

  @Override
  public boolean isNullAt(int rowId) {
    return vector.isNull(rowId);
  }

  private UnsupportedOperationException notOf(String getter) {
    return new UnsupportedOperationException(getter + " on a " + type.simpleString() + " column");
  }

  @Override
  public boolean getBoolean(int rowId) {
    throw notOf("getBoolean");
  }

  @Override
  public byte getByte(int rowId) {
    throw notOf("getByte");
  }

  @Override
  public short getShort(int rowId) {
    throw notOf("getShort");
  }

  @Override
  public int getInt(int rowId) {
    throw notOf("getInt");
  }

  @Override
  public long getLong(int rowId) {
    throw notOf("getLong");
  }

  @Override
  public float getFloat(int rowId) {
    throw notOf("getFloat");
  }

  @Override
  public double getDouble(int rowId) {
    throw notOf("getDouble");
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    throw notOf("getArray");
  }

  @Override
  public ColumnarMap getMap(int ordinal) {
    throw notOf("getMap");
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    throw notOf("getDecimal");
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    throw notOf("getUTF8String");
  }

  @Override
  public byte[] getBinary(int rowId) {
    throw notOf("getBinary");
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    throw notOf("getChild");
  }
}
