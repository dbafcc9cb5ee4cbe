package io.gpudirect.spark.arrow;

import io.gpudirect.GpuDirectException;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.spark.sql.types.DataType;

/**
 * Arrow timestamps, times and durations in seconds, milliseconds or nanoseconds as Spark's
 * microseconds ({@code getLong}), and Arrow date64 milliseconds as Spark's days
 * ({@code getInt}). Nanoseconds and sub-day milliseconds round toward negative infinity
 * (floor), as Spark does for its own conversions; a value whose microseconds overflow a
 * long fails instead of wrapping.
 */
final class TimeUnitColumnVector extends ConvertedColumnVector {
  private static final long MILLIS_PER_DAY = 86_400_000L;

  private final BaseFixedWidthVector values;
  private final TimeUnit unit;
  private final String column;

  /** {@code values} holds 4- or 8-byte ints; {@code column} names it for errors. */
  TimeUnitColumnVector(DataType type, BaseFixedWidthVector values, TimeUnit unit, String column) {
    super(type, values);
    this.values = values;
    this.unit = unit;
    this.column = column;
  }

  private long raw(int rowId) {
    return values.getTypeWidth() == 4
        ? values.getDataBuffer().getInt((long) rowId * 4)
        : values.getDataBuffer().getLong((long) rowId * 8);
  }

  /** Date64 milliseconds as days since the epoch. */
  @Override
  public int getInt(int rowId) {
    return (int) Math.floorDiv(raw(rowId), MILLIS_PER_DAY);
  }

  @Override
  public long getLong(int rowId) {
    long raw = raw(rowId);
    try {
      switch (unit) {
        case SECOND:
          return Math.multiplyExact(raw, 1_000_000L);
        case MILLISECOND:
          return Math.multiplyExact(raw, 1_000L);
        case MICROSECOND:
          return raw;
        default:
          return Math.floorDiv(raw, 1_000L);
      }
    } catch (ArithmeticException e) {
      throw new GpuDirectException(column + " row " + rowId + ": " + raw + " " + unit
          + " does not fit in Spark's microseconds", e);
    }
  }
}
