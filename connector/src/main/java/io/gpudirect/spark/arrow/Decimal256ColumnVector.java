package io.gpudirect.spark.arrow;

import org.apache.arrow.vector.Decimal256Vector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;

/** Arrow decimal256 of precision up to 38 as a Spark decimal (wider ones are refused by the mapping). */
final class Decimal256ColumnVector extends ConvertedColumnVector {
  private final Decimal256Vector decimals;

  Decimal256ColumnVector(DataType type, Decimal256Vector decimals) {
    super(type, decimals);
    this.decimals = decimals;
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    if (isNullAt(rowId)) {
      return null;
    }
    return Decimal.apply(decimals.getObject(rowId), precision, scale);
  }
}
