package io.gpudirect.spark.arrow;

import ai.rapids.cudf.DType;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Arrow types whose IPC layout cuDF reads as it is, and their cuDF types (docs/arrow-type-mapping.md).
 * Booleans are the one conversion (bits to bytes, on the GPU). Anything else is refused,
 * naming the column and its type.
 */
final class CudfTypeMapping {
  private CudfTypeMapping() {}

  static DType of(Field field, String displayName) {
    ArrowType t = field.getType();
    if (field.getDictionary() == null) {
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
        case Utf8:
          return DType.STRING;
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
    }
    throw new ArrowFormatException(displayName, "column '" + field.getName() + "' is " + t
        + (field.getDictionary() != null ? " (dictionary-encoded)" : "")
        + ", which is not read into cuDF yet; select other columns, or read it with spark.read.format(\"gpudirect\")");
  }
}
