package io.gpudirect.spark.arrow;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.Decimal256Vector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.DurationVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntervalDayVector;
import org.apache.arrow.vector.IntervalMonthDayNanoVector;
import org.apache.arrow.vector.IntervalYearVector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.NullVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.UInt2Vector;
import org.apache.arrow.vector.UInt4Vector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.BaseListVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;

/**
 * The expected value of an Arrow vector's row after the documented type mapping, computed
 * straight from Arrow Java's own getters (independently of the production column vectors),
 * in the representation {@link SparkValues} produces.
 */
final class ArrowValues {
  private ArrowValues() {}

  static List<List<Object>> rows(VectorSchemaRoot root, DictionaryProvider dictionaries) {
    List<List<Object>> rows = new ArrayList<>();
    for (int r = 0; r < root.getRowCount(); r++) {
      List<Object> values = new ArrayList<>();
      for (FieldVector vector : root.getFieldVectors()) {
        values.add(value(vector, r, dictionaries));
      }
      rows.add(values);
    }
    return rows;
  }

  static Object value(ValueVector v, int i, DictionaryProvider dictionaries) {
    if (v instanceof NullVector || v.isNull(i)) {
      return null;
    }
    DictionaryEncoding encoding = v.getField().getDictionary();
    if (encoding != null) {
      Dictionary dictionary = dictionaries.lookup(encoding.getId());
      int index = ((Number) v.getObject(i)).intValue();
      return value(dictionary.getVector(), index, dictionaries);
    }
    ArrowType type = v.getField().getType();
    if (v instanceof BitVector) {
      return ((BitVector) v).get(i) != 0;
    } else if (v instanceof UInt1Vector) {
      return (short) Byte.toUnsignedInt(((UInt1Vector) v).get(i));
    } else if (v instanceof UInt2Vector) {
      return (int) ((UInt2Vector) v).get(i);
    } else if (v instanceof UInt4Vector) {
      return Integer.toUnsignedLong(((UInt4Vector) v).get(i));
    } else if (v instanceof UInt8Vector) {
      return new BigDecimal(new BigInteger(Long.toUnsignedString(((UInt8Vector) v).get(i))));
    } else if (type instanceof ArrowType.Int || v instanceof Float4Vector || v instanceof Float8Vector
        || v instanceof DateDayVector || v instanceof IntervalYearVector) {
      return v.getObject(i);
    } else if (v instanceof VarCharVector || v instanceof LargeVarCharVector) {
      return v.getObject(i).toString();
    } else if (v instanceof VarBinaryVector || v instanceof LargeVarBinaryVector
        || v instanceof FixedSizeBinaryVector) {
      return HexFormat.of().formatHex((byte[]) v.getObject(i));
    } else if (v instanceof DecimalVector || v instanceof Decimal256Vector) {
      return v.getObject(i);
    } else if (v instanceof DateMilliVector) {
      return (int) Math.floorDiv(((DateMilliVector) v).get(i), 86_400_000L);
    } else if (type instanceof ArrowType.Time) {
      return micros(raw((BaseFixedWidthVector) v, i), ((ArrowType.Time) type).getUnit());
    } else if (type instanceof ArrowType.Timestamp) {
      return micros(raw((BaseFixedWidthVector) v, i), ((ArrowType.Timestamp) type).getUnit());
    } else if (v instanceof DurationVector) {
      return micros(raw((BaseFixedWidthVector) v, i), ((ArrowType.Duration) type).getUnit());
    } else if (v instanceof IntervalDayVector) {
      java.time.Duration d = ((IntervalDayVector) v).getObject(i);
      return d.getSeconds() * 1_000_000L + d.getNano() / 1_000;
    } else if (v instanceof IntervalMonthDayNanoVector) {
      org.apache.arrow.vector.PeriodDuration pd = ((IntervalMonthDayNanoVector) v).getObject(i);
      long nanos = pd.getDuration().getSeconds() * 1_000_000_000L + pd.getDuration().getNano();
      return pd.getPeriod().toTotalMonths() + "/" + pd.getPeriod().getDays() + "/" + Math.floorDiv(nanos, 1000L);
    } else if (v instanceof MapVector) {
      MapVector map = (MapVector) v;
      StructVector entries = (StructVector) map.getDataVector();
      Map<Object, Object> values = new LinkedHashMap<>();
      for (int j = map.getElementStartIndex(i); j < map.getElementEndIndex(i); j++) {
        values.put(value(entries.getChildByOrdinal(0), j, dictionaries),
            value(entries.getChildByOrdinal(1), j, dictionaries));
      }
      return values;
    } else if (v instanceof LargeListVector) {
      // Not a BaseListVector in Arrow 12: its offsets are read directly.
      LargeListVector list = (LargeListVector) v;
      List<Object> values = new ArrayList<>();
      for (long j = list.getOffsetBuffer().getLong(i * 8L); j < list.getOffsetBuffer().getLong((i + 1) * 8L); j++) {
        values.add(value(list.getDataVector(), (int) j, dictionaries));
      }
      return values;
    } else if (v instanceof ListVector || v instanceof FixedSizeListVector) {
      BaseListVector list = (BaseListVector) v;
      ValueVector elements = v instanceof ListVector ? ((ListVector) v).getDataVector()
          : ((FixedSizeListVector) v).getDataVector();
      List<Object> values = new ArrayList<>();
      for (int j = list.getElementStartIndex(i); j < list.getElementEndIndex(i); j++) {
        values.add(value(elements, j, dictionaries));
      }
      return values;
    } else if (v instanceof StructVector) {
      StructVector struct = (StructVector) v;
      List<Object> values = new ArrayList<>();
      for (int j = 0; j < struct.size(); j++) {
        values.add(value(struct.getChildByOrdinal(j), i, dictionaries));
      }
      return values;
    }
    throw new AssertionError("no expectation for " + v.getField());
  }

  private static long raw(BaseFixedWidthVector v, int i) {
    return v.getTypeWidth() == 4 ? v.getDataBuffer().getInt(i * 4L) : v.getDataBuffer().getLong(i * 8L);
  }

  private static long micros(long raw, TimeUnit unit) {
    switch (unit) {
      case SECOND:
        return raw * 1_000_000L;
      case MILLISECOND:
        return raw * 1_000L;
      case MICROSECOND:
        return raw;
      default:
        return Math.floorDiv(raw, 1_000L);
    }
  }
}
