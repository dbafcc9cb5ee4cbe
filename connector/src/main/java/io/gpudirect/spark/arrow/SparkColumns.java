package io.gpudirect.spark.arrow;

import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.Decimal256Vector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.IntervalDayVector;
import org.apache.arrow.vector.IntervalMonthDayNanoVector;
import org.apache.arrow.vector.ValueVector;
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
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;

/**
 * Wraps a loaded, validated Arrow vector as a Spark column without copying values: Spark's
 * own {@link ArrowColumnVector} where the whole field is a twin (see
 * {@link SparkTypeMapping#isTwin}), otherwise a converting column that reads the same
 * Arrow buffers on access.
 */
final class SparkColumns {
  private SparkColumns() {}

  /**
   * @param type the field's Spark type from {@link SparkTypeMapping}
   * @param column the column's path and file, for errors raised on access
   */
  static ColumnVector of(ValueVector vector, DataType type, DictionaryProvider dictionaries, String column) {
    Field field = vector.getField();
    DictionaryEncoding encoding = field.getDictionary();
    if (encoding != null) {
      Dictionary dictionary = dictionaries.lookup(encoding.getId());
      ColumnVector values = of(dictionary.getVector(), type, dictionaries, column);
      return new DictionaryColumnVector((BaseIntVector) vector, values);
    }
    if (SparkTypeMapping.isTwin(field)) {
      return new ReaderOwnedArrowColumn(vector);
    }
    ArrowType arrowType = field.getType();
    switch (arrowType.getTypeID()) {
      case Int:
        return new UnsignedIntColumnVector(type, (BaseFixedWidthVector) vector);
      case Date:
        return new TimeUnitColumnVector(type, (BaseFixedWidthVector) vector, TimeUnit.MILLISECOND, column);
      case Time:
        return new TimeUnitColumnVector(type, (BaseFixedWidthVector) vector,
            ((ArrowType.Time) arrowType).getUnit(), column);
      case Timestamp:
        return new TimeUnitColumnVector(type, (BaseFixedWidthVector) vector,
            ((ArrowType.Timestamp) arrowType).getUnit(), column);
      case Duration:
        return new TimeUnitColumnVector(type, (BaseFixedWidthVector) vector,
            ((ArrowType.Duration) arrowType).getUnit(), column);
      case Interval:
        return vector instanceof IntervalDayVector
            ? new IntervalColumnVectors.DayTime((IntervalDayVector) vector)
            : new IntervalColumnVectors.MonthDayNano((IntervalMonthDayNanoVector) vector);
      case FixedSizeBinary:
        return new FixedSizeBinaryColumnVector((FixedSizeBinaryVector) vector);
      case Decimal:
        return new Decimal256ColumnVector(type, (Decimal256Vector) vector);
      case Map: {
        MapVector maps = (MapVector) vector;
        MapType mapType = (MapType) type;
        StructVector entries = (StructVector) maps.getDataVector();
        ColumnVector keys = of(entries.getChildByOrdinal(0), mapType.keyType(), dictionaries, column + ".key");
        ColumnVector values =
            of(entries.getChildByOrdinal(1), mapType.valueType(), dictionaries, column + ".value");
        return new MapColumnVector(type, maps, keys, values);
      }
      case List:
        return ListColumnVector.of(type, (ListVector) vector,
            elements(((ListVector) vector).getDataVector(), type, dictionaries, column));
      case LargeList:
        return ListColumnVector.of(type, (LargeListVector) vector,
            elements(((LargeListVector) vector).getDataVector(), type, dictionaries, column));
      case FixedSizeList:
        return ListColumnVector.of(type, (FixedSizeListVector) vector,
            elements(((FixedSizeListVector) vector).getDataVector(), type, dictionaries, column));
      case Struct: {
        StructVector struct = (StructVector) vector;
        StructType structType = (StructType) type;
        ColumnVector[] children = new ColumnVector[structType.size()];
        for (int i = 0; i < children.length; i++) {
          children[i] = of(struct.getChildByOrdinal(i), structType.fields()[i].dataType(), dictionaries,
              column + "." + structType.fields()[i].name());
        }
        return new StructColumnVector(type, struct, children);
      }
      default:
        // SparkTypeMapping refuses every other type before a batch is read.
        throw new IllegalStateException("No Spark column for Arrow type " + arrowType + " of " + column);
    }
  }

  private static ColumnVector elements(FieldVector elements, DataType listType,
      DictionaryProvider dictionaries, String column) {
    return of(elements, ((ArrayType) listType).elementType(), dictionaries, column + ".element");
  }
}
