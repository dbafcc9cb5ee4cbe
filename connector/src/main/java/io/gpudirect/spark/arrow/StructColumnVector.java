package io.gpudirect.spark.arrow;

import org.apache.arrow.vector.complex.StructVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnVector;

/** An Arrow struct with at least one child that needs conversion, as a Spark struct. */
final class StructColumnVector extends ConvertedColumnVector {
  private final ColumnVector[] children;

  StructColumnVector(DataType type, StructVector struct, ColumnVector[] children) {
    super(type, struct);
    this.children = children;
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    return children[ordinal];
  }
}
