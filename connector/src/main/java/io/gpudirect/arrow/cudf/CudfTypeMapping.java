package io.gpudirect.arrow.cudf;

import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostColumnVector;
import io.gpudirect.arrow.ArrowFormatException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * Arrow types and the cuDF types they become (docs/arrow-type-mapping.md). Most are read as
 * they are; booleans are unpacked on the GPU, binary becomes LIST&lt;UINT8&gt;, nulls an all-null
 * INT8 column (no buffers to fetch), large offsets
 * are narrowed on the host, fixed-size lists get offsets made on the host, and
 * dictionary-encoded columns are decoded with a cuDF gather. Anything else is refused, naming
 * the column (with its path inside nested columns) and its type.
 */
final class CudfTypeMapping {
  private CudfTypeMapping() {}

  /** The cuDF type of {@code field} (the decoded type for a dictionary-encoded one), checked all the way down. */
  static DType of(Field field, String displayName) {
    return of(field, "'" + field.getName() + "'", displayName);
  }

  private static DType of(Field field, String path, String displayName) {
    DType type = own(field, field.getType(), path, displayName);
    for (Field child : field.getChildren()) {
      of(child, path.substring(0, path.length() - 1) + "." + child.getName() + "'", displayName);
    }
    return type;
  }

  /** The type of one level; children are checked by the caller. */
  private static DType own(Field field, ArrowType t, String path, String displayName) {
    switch (t.getTypeID()) {
      case Int: {
        ArrowType.Int i = (ArrowType.Int) t;
        switch (i.getBitWidth()) {
          case 8: return i.getIsSigned() ? DType.INT8 : DType.UINT8;
          case 16: return i.getIsSigned() ? DType.INT16 : DType.UINT16;
          case 32: return i.getIsSigned() ? DType.INT32 : DType.UINT32;
          case 64: return i.getIsSigned() ? DType.INT64 : DType.UINT64;
          default: break;
        }
        break;
      }
      case FloatingPoint: {
        FloatingPointPrecision p = ((ArrowType.FloatingPoint) t).getPrecision();
        if (p == FloatingPointPrecision.SINGLE) {
          return DType.FLOAT32;
        }
        if (p == FloatingPointPrecision.DOUBLE) {
          return DType.FLOAT64;
        }
        break;
      }
      case Bool:
        return DType.BOOL8;
      case Null:
        // cuDF has no null-only type; an all-null INT8 column is how the RAPIDS plugin holds one.
        return DType.INT8;
      case Utf8:
      case LargeUtf8:
        return DType.STRING;
      case Binary:
      case LargeBinary:
      case FixedSizeBinary:
        // cuDF has no binary type; LIST<UINT8> is how cuDF (and the RAPIDS plugin) hold bytes.
      case List:
      case LargeList:
      case FixedSizeList:
      case Map:
        // An Arrow map is list<struct<key, value>> in memory, which is cuDF's map too.
        return DType.LIST;
      case Struct:
        return DType.STRUCT;
      case Decimal: {
        ArrowType.Decimal d = (ArrowType.Decimal) t;
        if (d.getBitWidth() == 128 && d.getPrecision() <= DType.DECIMAL128_MAX_PRECISION) {
          // cuDF's scale counts the other way: value = unscaled * 10^scale.
          return DType.create(DType.DTypeEnum.DECIMAL128, -d.getScale());
        }
        break;
      }
      case Date:
        return ((ArrowType.Date) t).getUnit() == org.apache.arrow.vector.types.DateUnit.DAY
            ? DType.TIMESTAMP_DAYS : DType.TIMESTAMP_MILLISECONDS;
      case Timestamp:
        // cuDF timestamps are UTC instants; a zone name is not kept.
        switch (((ArrowType.Timestamp) t).getUnit()) {
          case SECOND: return DType.TIMESTAMP_SECONDS;
          case MILLISECOND: return DType.TIMESTAMP_MILLISECONDS;
          case MICROSECOND: return DType.TIMESTAMP_MICROSECONDS;
          case NANOSECOND: return DType.TIMESTAMP_NANOSECONDS;
          default: break;
        }
        break;
      case Duration:
        switch (((ArrowType.Duration) t).getUnit()) {
          case SECOND: return DType.DURATION_SECONDS;
          case MILLISECOND: return DType.DURATION_MILLISECONDS;
          case MICROSECOND: return DType.DURATION_MICROSECONDS;
          case NANOSECOND: return DType.DURATION_NANOSECONDS;
          default: break;
        }
        break;
      default:
        break;
    }
    throw new ArrowFormatException(displayName, "column " + path + " is " + t + (field.getDictionary() != null
        ? " (dictionary-encoded)" : "") + ", which cuDF cannot hold (" + reason(t)
        + "); select other columns, or read it with spark.read.format(\"gpudirect\")");
  }

  private static String reason(ArrowType t) {
    switch (t.getTypeID()) {
      case Union: return "it has no union type";
      case Time: return "it has no time-of-day type";
      case Interval: return "it has no calendar interval type";
      case Decimal: return "its decimals stop at 128 bits and 38 digits";
      case FloatingPoint: return "it has no half-precision float";
      default: return "no mapping is defined for it";
    }
  }

  /** The index type of a dictionary-encoded field, as cuDF sees it. */
  static DType indexType(Field field, String displayName) {
    ArrowType.Int index = field.getDictionary().getIndexType();
    return own(field, index, "'" + field.getName() + "' (its dictionary indices)", displayName);
  }

  /** The field a dictionary's values are written with: the encoded field's type and children, not encoded. */
  static Field dictionaryValues(Field encoded) {
    return new Field(encoded.getName(), new FieldType(true, encoded.getType(), null), encoded.getChildren());
  }

  /** {@code field}'s cuDF type with its children, as cuDF's host API spells it (for empty columns). */
  static HostColumnVector.DataType hostType(Field field, String displayName) {
    DType type = of(field, displayName);
    ArrowType.ArrowTypeID id = field.getType().getTypeID();
    if (id == ArrowType.ArrowTypeID.Binary || id == ArrowType.ArrowTypeID.LargeBinary
        || id == ArrowType.ArrowTypeID.FixedSizeBinary) {
      return new HostColumnVector.ListType(true, new HostColumnVector.BasicType(false, DType.UINT8));
    }
    if (type.equals(DType.LIST)) {
      return new HostColumnVector.ListType(true, hostType(field.getChildren().get(0), displayName));
    }
    if (type.equals(DType.STRUCT)) {
      List<HostColumnVector.DataType> children = new ArrayList<>();
      for (Field c : field.getChildren()) {
        children.add(hostType(c, displayName));
      }
      return new HostColumnVector.StructType(true, children);
    }
    return new HostColumnVector.BasicType(true, type);
  }
}
