package io.gpudirect.spark.arrow;

import io.gpudirect.arrow.ArrowFormatException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.IntervalUnit;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DayTimeIntervalType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.YearMonthIntervalType;

/**
 * The Arrow → Spark type mapping of docs/arrow-type-mapping.md. A field is a "twin" when
 * Spark's own {@code ArrowColumnVector} reads its vector as is (same type as
 * {@code ArrowUtils.fromArrowField}, no conversion); every other mapped field is read by
 * one of our converting column vectors. Dictionary-encoded fields map to their value type.
 */
final class SparkTypeMapping {
  private SparkTypeMapping() {}

  static StructType sparkSchema(Schema schema, String displayName) {
    List<StructField> fields = new ArrayList<>();
    for (Field field : schema.getFields()) {
      String path = field.getName() != null ? field.getName() : "#" + fields.size();
      fields.add(structField(field, path, displayName));
    }
    return new StructType(fields.toArray(new StructField[0]));
  }

  /** Whether Spark's ArrowColumnVector reads this field's vector (and all below it) as is. */
  static boolean isTwin(Field field) {
    if (field.getDictionary() != null) {
      return false;
    }
    ArrowType type = field.getType();
    switch (type.getTypeID()) {
      case Null:
      case Bool:
      case Utf8:
      case LargeUtf8:
      case Binary:
      case LargeBinary:
        return true;
      case Int:
        return ((ArrowType.Int) type).getIsSigned();
      case FloatingPoint:
        return ((ArrowType.FloatingPoint) type).getPrecision() != FloatingPointPrecision.HALF;
      case Decimal:
        return ((ArrowType.Decimal) type).getBitWidth() == 128;
      case Date:
        return ((ArrowType.Date) type).getUnit() == DateUnit.DAY;
      case Timestamp:
        return ((ArrowType.Timestamp) type).getUnit() == TimeUnit.MICROSECOND;
      case Duration:
        return ((ArrowType.Duration) type).getUnit() == TimeUnit.MICROSECOND;
      case Interval:
        return ((ArrowType.Interval) type).getUnit() == IntervalUnit.YEAR_MONTH;
      case List:
      case Struct:
        return field.getChildren().stream().allMatch(SparkTypeMapping::isTwin);
      case Map:
        // The map's only child is the entries struct of key and value.
        return field.getChildren().stream().allMatch(SparkTypeMapping::isTwin);
      default:
        return false;
    }
  }

  static DataType sparkType(Field field, String path, String displayName) {
    ArrowType type = field.getType();
    switch (type.getTypeID()) {
      case Null:
        return DataTypes.NullType;
      case Bool:
        return DataTypes.BooleanType;
      case Int:
        return intType((ArrowType.Int) type);
      case FloatingPoint:
        switch (((ArrowType.FloatingPoint) type).getPrecision()) {
          case SINGLE:
            return DataTypes.FloatType;
          case DOUBLE:
            return DataTypes.DoubleType;
          default:
            // FloatType on paper (docs), but Arrow Java 12.0.1, the version Spark 3.5
            // ships, has no Float2Vector to load half floats into.
            throw unsupported(path, type, displayName, "Arrow Java 12.0.1 cannot load half floats");
        }
      case Utf8:
      case LargeUtf8:
        return DataTypes.StringType;
      case Binary:
      case LargeBinary:
      case FixedSizeBinary:
        return DataTypes.BinaryType;
      case Decimal:
        ArrowType.Decimal decimal = (ArrowType.Decimal) type;
        if (decimal.getPrecision() > DecimalType.MAX_PRECISION()
            || decimal.getScale() > decimal.getPrecision() || decimal.getScale() < 0) {
          throw unsupported(path, type, displayName,
              "Spark decimals hold precision up to 38 and scale 0..precision");
        }
        return DataTypes.createDecimalType(decimal.getPrecision(), decimal.getScale());
      case Date:
        return DataTypes.DateType;
      case Time:
        return DataTypes.LongType;
      case Timestamp:
        return ((ArrowType.Timestamp) type).getTimezone() == null
            ? DataTypes.TimestampNTZType
            : DataTypes.TimestampType;
      case Duration:
        return DayTimeIntervalType.apply();
      case Interval:
        switch (((ArrowType.Interval) type).getUnit()) {
          case YEAR_MONTH:
            return YearMonthIntervalType.apply();
          case DAY_TIME:
            return DayTimeIntervalType.apply();
          case MONTH_DAY_NANO:
            return DataTypes.CalendarIntervalType;
          default:
            throw unsupported(path, type, displayName, "unknown interval unit");
        }
      case List:
      case LargeList:
      case FixedSizeList: {
        Field element = onlyChild(field, path, displayName);
        return new ArrayType(sparkType(element, path + ".element", displayName), element.isNullable());
      }
      case Struct: {
        List<StructField> fields = new ArrayList<>();
        for (Field child : field.getChildren()) {
          fields.add(structField(child, path + "." + child.getName(), displayName));
        }
        return new StructType(fields.toArray(new StructField[0]));
      }
      case Map: {
        Field entries = onlyChild(field, path, displayName);
        if (entries.getChildren().size() != 2) {
          throw unsupported(path, type, displayName, "a map's entries must be a struct of key and value");
        }
        Field key = entries.getChildren().get(0);
        Field value = entries.getChildren().get(1);
        return new MapType(sparkType(key, path + ".key", displayName),
            sparkType(value, path + ".value", displayName), value.isNullable());
      }
      default:
        throw unsupported(path, type, displayName, "no Spark type represents it");
    }
  }

  private static StructField structField(Field field, String path, String displayName) {
    if (field.getName() == null) {
      throw new ArrowFormatException(displayName, "column " + path + " has no name");
    }
    DataType type = sparkType(field, path, displayName);
    return new StructField(field.getName(), type, field.isNullable(), Metadata.empty());
  }

  private static DataType intType(ArrowType.Int type) {
    int bits = type.getBitWidth();
    if (type.getIsSigned()) {
      switch (bits) {
        case 8: return DataTypes.ByteType;
        case 16: return DataTypes.ShortType;
        case 32: return DataTypes.IntegerType;
        default: return DataTypes.LongType;
      }
    }
    switch (bits) {
      case 8: return DataTypes.ShortType;
      case 16: return DataTypes.IntegerType;
      case 32: return DataTypes.LongType;
      default: return DataTypes.createDecimalType(20, 0);
    }
  }

  private static Field onlyChild(Field field, String path, String displayName) {
    if (field.getChildren().size() != 1) {
      throw unsupported(path, field.getType(), displayName,
          "it must have exactly one child, not " + field.getChildren().size());
    }
    return field.getChildren().get(0);
  }

  private static ArrowFormatException unsupported(
      String path, ArrowType type, String displayName, String why) {
    return new ArrowFormatException(displayName,
        "column '" + path + "' has Arrow type " + type + ", which cannot be read into Spark: " + why);
  }
}
