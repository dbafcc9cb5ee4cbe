package io.gpudirect.spark.arrow;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.MapData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.CalendarIntervalType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DayTimeIntervalType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.types.YearMonthIntervalType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.CalendarInterval;

/**
 * Reads Spark columnar data through Spark's own getters (ColumnarBatchRow, ColumnarArray,
 * ColumnarRow, ColumnarMap) into plain Java values: Boolean, Byte, Short, Integer, Long,
 * Float, Double, String, hex String for binary, BigDecimal, List for arrays and structs,
 * Map for maps, "months/days/micros" for calendar intervals, null for null.
 */
final class SparkValues {
  private SparkValues() {}

  static List<List<Object>> rows(ColumnarBatch batch, StructType schema) {
    List<List<Object>> rows = new ArrayList<>();
    for (int r = 0; r < batch.numRows(); r++) {
      InternalRow row = batch.getRow(r);
      List<Object> values = new ArrayList<>();
      for (int c = 0; c < schema.size(); c++) {
        values.add(value(row, c, schema.fields()[c].dataType()));
      }
      rows.add(values);
    }
    return rows;
  }

  static Object value(SpecializedGetters g, int i, DataType type) {
    if (g.isNullAt(i)) {
      return null;
    }
    if (type instanceof NullType) {
      throw new AssertionError("a NullType value is not null");
    } else if (type instanceof BooleanType) {
      return g.getBoolean(i);
    } else if (type instanceof ByteType) {
      return g.getByte(i);
    } else if (type instanceof ShortType) {
      return g.getShort(i);
    } else if (type instanceof IntegerType || type instanceof DateType || type instanceof YearMonthIntervalType) {
      return g.getInt(i);
    } else if (type instanceof LongType || type instanceof TimestampType || type instanceof TimestampNTZType
        || type instanceof DayTimeIntervalType) {
      return g.getLong(i);
    } else if (type instanceof FloatType) {
      return g.getFloat(i);
    } else if (type instanceof DoubleType) {
      return g.getDouble(i);
    } else if (type instanceof StringType) {
      return g.getUTF8String(i).toString();
    } else if (type instanceof BinaryType) {
      return HexFormat.of().formatHex(g.getBinary(i));
    } else if (type instanceof DecimalType) {
      DecimalType d = (DecimalType) type;
      return g.getDecimal(i, d.precision(), d.scale()).toJavaBigDecimal();
    } else if (type instanceof CalendarIntervalType) {
      CalendarInterval interval = g.getInterval(i);
      return interval.months + "/" + interval.days + "/" + interval.microseconds;
    } else if (type instanceof ArrayType) {
      ArrayData array = g.getArray(i);
      DataType element = ((ArrayType) type).elementType();
      List<Object> values = new ArrayList<>();
      for (int j = 0; j < array.numElements(); j++) {
        values.add(value(array, j, element));
      }
      return values;
    } else if (type instanceof StructType) {
      StructType struct = (StructType) type;
      InternalRow row = g.getStruct(i, struct.size());
      List<Object> values = new ArrayList<>();
      for (int j = 0; j < struct.size(); j++) {
        values.add(value(row, j, struct.fields()[j].dataType()));
      }
      return values;
    } else if (type instanceof MapType) {
      MapType mapType = (MapType) type;
      MapData map = g.getMap(i);
      Map<Object, Object> values = new LinkedHashMap<>();
      for (int j = 0; j < map.numElements(); j++) {
        values.put(value(map.keyArray(), j, mapType.keyType()), value(map.valueArray(), j, mapType.valueType()));
      }
      return values;
    }
    throw new AssertionError("no test reader for " + type);
  }
}
