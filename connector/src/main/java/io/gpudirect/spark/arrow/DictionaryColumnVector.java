package io.gpudirect.spark.arrow;

import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A dictionary-encoded Arrow column as its decoded values: each getter looks the row's index
 * up in a Spark column over the dictionary, so nothing is decoded ahead. Indices were
 * checked against the dictionary's size when the batch was loaded. The dictionary belongs
 * to the reader, which may keep it across batches; closing this column leaves it alone.
 */
final class DictionaryColumnVector extends ConvertedColumnVector {
  private final BaseIntVector indices;
  private final ColumnVector dictionary;

  DictionaryColumnVector(BaseIntVector indices, ColumnVector dictionary) {
    super(dictionary.dataType(), (ValueVector) indices);
    this.indices = indices;
    this.dictionary = dictionary;
  }

  private int index(int rowId) {
    return (int) indices.getValueAsLong(rowId);
  }

  @Override
  public int numNulls() {
    int nulls = 0;
    for (int i = 0; i < vector.getValueCount(); i++) {
      if (isNullAt(i)) {
        nulls++;
      }
    }
    return nulls;
  }

  @Override
  public boolean isNullAt(int rowId) {
    return vector.isNull(rowId) || dictionary.isNullAt(index(rowId));
  }

  @Override
  public boolean getBoolean(int rowId) {
    return dictionary.getBoolean(index(rowId));
  }

  @Override
  public byte getByte(int rowId) {
    return dictionary.getByte(index(rowId));
  }

  @Override
  public short getShort(int rowId) {
    return dictionary.getShort(index(rowId));
  }

  @Override
  public int getInt(int rowId) {
    return dictionary.getInt(index(rowId));
  }

  @Override
  public long getLong(int rowId) {
    return dictionary.getLong(index(rowId));
  }

  @Override
  public float getFloat(int rowId) {
    return dictionary.getFloat(index(rowId));
  }

  @Override
  public double getDouble(int rowId) {
    return dictionary.getDouble(index(rowId));
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    return isNullAt(rowId) ? null : dictionary.getDecimal(index(rowId), precision, scale);
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    return isNullAt(rowId) ? null : dictionary.getUTF8String(index(rowId));
  }

  @Override
  public byte[] getBinary(int rowId) {
    return isNullAt(rowId) ? null : dictionary.getBinary(index(rowId));
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    return isNullAt(rowId) ? null : dictionary.getArray(index(rowId));
  }

  @Override
  public ColumnarMap getMap(int rowId) {
    return isNullAt(rowId) ? null : dictionary.getMap(index(rowId));
  }

  /** A struct dictionary's field, still looked up through this column's indices. */
  @Override
  public ColumnVector getChild(int ordinal) {
    return new DictionaryColumnVector(indices, dictionary.getChild(ordinal));
  }
}
