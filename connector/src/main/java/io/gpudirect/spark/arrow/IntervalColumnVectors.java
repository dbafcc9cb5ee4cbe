package io.gpudirect.spark.arrow;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.IntervalDayVector;
import org.apache.arrow.vector.IntervalMonthDayNanoVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DayTimeIntervalType;
import org.apache.spark.sql.vectorized.ColumnVector;

/** Arrow intervals that Spark has no twin for. */
final class IntervalColumnVectors {
  private IntervalColumnVectors() {}

  /**
   * Arrow interval(DAY_TIME), stored as (days int32, milliseconds int32), as Spark's
   * day-time interval in microseconds, a day being 24 hours.
   */
  static final class DayTime extends ConvertedColumnVector {
    private final IntervalDayVector intervals;

    DayTime(IntervalDayVector intervals) {
      super(DayTimeIntervalType.apply(), intervals);
      this.intervals = intervals;
    }

    @Override
    public long getLong(int rowId) {
      ArrowBuf data = intervals.getDataBuffer();
      long at = (long) rowId * IntervalDayVector.TYPE_WIDTH;
      long days = data.getInt(at);
      long millis = data.getInt(at + 4);
      return Math.addExact(Math.multiplyExact(days, 86_400_000_000L), millis * 1_000L);
    }
  }

  /**
   * Arrow interval(MONTH_DAY_NANO), stored as (months int32, days int32, nanoseconds int64),
   * as Spark's calendar interval; nanoseconds are floored to microseconds. Spark reads a
   * calendar interval through three children (months, days, microseconds).
   */
  static final class MonthDayNano extends ConvertedColumnVector {
    private final ColumnVector[] parts;

    MonthDayNano(IntervalMonthDayNanoVector intervals) {
      super(DataTypes.CalendarIntervalType, intervals);
      parts = new ColumnVector[] {
        new Part(intervals, 0), new Part(intervals, 1), new Part(intervals, 2)
      };
    }

    @Override
    public ColumnVector getChild(int ordinal) {
      return parts[ordinal];
    }
  }

  private static final class Part extends ConvertedColumnVector {
    private final IntervalMonthDayNanoVector intervals;
    private final int part;

    Part(ValueVector intervals, int part) {
      super(part == 2 ? DataTypes.LongType : DataTypes.IntegerType, intervals);
      this.intervals = (IntervalMonthDayNanoVector) intervals;
      this.part = part;
    }

    @Override
    public int getInt(int rowId) {
      return intervals.getDataBuffer().getInt((long) rowId * IntervalMonthDayNanoVector.TYPE_WIDTH + part * 4L);
    }

    @Override
    public long getLong(int rowId) {
      long nanos = intervals.getDataBuffer().getLong((long) rowId * IntervalMonthDayNanoVector.TYPE_WIDTH + 8);
      return Math.floorDiv(nanos, 1_000L);
    }
  }
}
