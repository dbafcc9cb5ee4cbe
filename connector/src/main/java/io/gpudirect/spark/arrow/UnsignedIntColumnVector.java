package io.gpudirect.spark.arrow;

import java.math.BigDecimal;
import java.math.BigInteger;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;

/**
 * Unsigned Arrow ints widened to the next signed Spark type: uint8 → short, uint16 → int,
 * uint32 → long, uint64 → decimal(20, 0).
 */
final class UnsignedIntColumnVector extends ConvertedColumnVector {
  private final BaseFixedWidthVector ints;

  UnsignedIntColumnVector(DataType type, BaseFixedWidthVector ints) {
    super(type, ints);
    this.ints = ints;
  }

  private ArrowBuf data() {
    return ints.getDataBuffer();
  }

  @Override
  public short getShort(int rowId) {
    return (short) (data().getByte(rowId) & 0xFF);
  }

  @Override
  public int getInt(int rowId) {
    return data().getShort((long) rowId * 2) & 0xFFFF;
  }

  @Override
  public long getLong(int rowId) {
    return data().getInt((long) rowId * 4) & 0xFFFF_FFFFL;
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    if (isNullAt(rowId)) {
      return null;
    }
    long raw = data().getLong((long) rowId * 8);
    BigInteger unsigned = raw >= 0 ? BigInteger.valueOf(raw)
        : BigInteger.valueOf(raw & Long.MAX_VALUE).setBit(63);
    return Decimal.apply(new BigDecimal(unsigned), precision, scale);
  }
}
