package io.gpudirect.spark.arrow;

import org.apache.arrow.vector.complex.MapVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarMap;

/** An Arrow map whose keys or values need conversion, as a Spark map. */
final class MapColumnVector extends ConvertedColumnVector {
  private final MapVector maps;
  private final ColumnVector keys;
  private final ColumnVector values;

  MapColumnVector(DataType type, MapVector maps, ColumnVector keys, ColumnVector values) {
    super(type, maps);
    this.maps = maps;
    this.keys = keys;
    this.values = values;
  }

  @Override
  public ColumnarMap getMap(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    int start = maps.getOffsetBuffer().getInt((long) rowId * MapVector.OFFSET_WIDTH);
    int end = maps.getOffsetBuffer().getInt((long) (rowId + 1) * MapVector.OFFSET_WIDTH);
    return new ColumnarMap(keys, values, start, end - start);
  }
}
