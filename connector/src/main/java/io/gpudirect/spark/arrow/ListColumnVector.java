package io.gpudirect.spark.arrow;

import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;

/**
 * Arrow list, large list and fixed-size list as Spark arrays, over a Spark column of the
 * elements. Used when the elements need conversion or the list kind has no Spark twin;
 * offsets were validated against the elements when the batch was loaded.
 */
final class ListColumnVector extends ConvertedColumnVector {
  private final ColumnVector elements;
  private final ElementRange range;

  private interface ElementRange {
    long start(int rowId);

    long end(int rowId);
  }

  private ListColumnVector(DataType type, org.apache.arrow.vector.ValueVector lists,
      ColumnVector elements, ElementRange range) {
    super(type, lists);
    this.elements = elements;
    this.range = range;
  }

  static ListColumnVector of(DataType type, ListVector lists, ColumnVector elements) {
    return new ListColumnVector(type, lists, elements, new ElementRange() {
      @Override
      public long start(int rowId) {
        return lists.getOffsetBuffer().getInt((long) rowId * ListVector.OFFSET_WIDTH);
      }

      @Override
      public long end(int rowId) {
        return lists.getOffsetBuffer().getInt((long) (rowId + 1) * ListVector.OFFSET_WIDTH);
      }
    });
  }

  static ListColumnVector of(DataType type, LargeListVector lists, ColumnVector elements) {
    return new ListColumnVector(type, lists, elements, new ElementRange() {
      @Override
      public long start(int rowId) {
        return lists.getOffsetBuffer().getLong((long) rowId * LargeListVector.OFFSET_WIDTH);
      }

      @Override
      public long end(int rowId) {
        return lists.getOffsetBuffer().getLong((long) (rowId + 1) * LargeListVector.OFFSET_WIDTH);
      }
    });
  }

  static ListColumnVector of(DataType type, FixedSizeListVector lists, ColumnVector elements) {
    int size = lists.getListSize();
    return new ListColumnVector(type, lists, elements, new ElementRange() {
      @Override
      public long start(int rowId) {
        return (long) rowId * size;
      }

      @Override
      public long end(int rowId) {
        return (long) (rowId + 1) * size;
      }
    });
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    long start = range.start(rowId);
    return new ColumnarArray(elements, Math.toIntExact(start), Math.toIntExact(range.end(rowId) - start));
  }
}
