package io.gpudirect.spark.arrow;

import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.spark.sql.types.DataTypes;

/** Arrow fixed-size binary as Spark binary (Spark's getBinary copies out, as for its own binary). */
final class FixedSizeBinaryColumnVector extends ConvertedColumnVector {
  private final FixedSizeBinaryVector binaries;

  FixedSizeBinaryColumnVector(FixedSizeBinaryVector binaries) {
    super(DataTypes.BinaryType, binaries);
    this.binaries = binaries;
  }

  @Override
  public byte[] getBinary(int rowId) {
    return binaries.get(rowId);
  }
}
