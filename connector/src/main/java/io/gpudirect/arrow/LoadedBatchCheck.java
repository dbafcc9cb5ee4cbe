package io.gpudirect.arrow;

import java.math.BigDecimal;
import java.math.BigInteger;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.Decimal256Vector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;

/**
 * The checks between Arrow's parsing of a record batch and Spark reading it. Arrow Java
 * slices buffers out of the body without checking lengths are non-negative and loads them
 * without checking they fit the declared row counts; Spark's ArrowColumnVector then reads
 * strings through raw addresses. So: check the batch's numbers before loading, run Arrow's
 * full validation (offsets, buffer sizes, child lengths) after loading, and check every
 * dictionary index against its dictionary.
 */
final class LoadedBatchCheck {
  private LoadedBatchCheck() {}

  /** Checks {@code batch}'s numbers; on failure releases it, since Arrow will not load it. */
  static void beforeLoad(ArrowRecordBatch batch, String what, String displayName) {
    try {
      checkNumbers(batch, what, displayName);
    } catch (RuntimeException e) {
      batch.close();
      throw e;
    }
  }

  private static void checkNumbers(ArrowRecordBatch batch, String what, String displayName) {
    if (batch.getLength() < 0) {
      throw new ArrowFormatException(displayName, what + " has a negative row count " + batch.getLength());
    }
    byte codec = batch.getBodyCompression().getCodec();
    if (codec != CompressionUtil.CodecType.NO_COMPRESSION.getType()) {
      BufferDecompression.checkCodec(codec, what, displayName);
    }
    for (ArrowFieldNode node : batch.getNodes()) {
      if (node.getLength() < 0 || node.getNullCount() < 0 || node.getNullCount() > node.getLength()) {
        throw new ArrowFormatException(displayName, what + " has a field node of length "
            + node.getLength() + " with " + node.getNullCount() + " nulls");
      }
    }
    for (ArrowBuf buffer : batch.getBuffers()) {
      if (buffer.capacity() < 0) {
        throw new ArrowFormatException(displayName, what + " has a buffer of negative length " + buffer.capacity());
      }
    }
  }

  static void afterLoad(VectorSchemaRoot root, DictionaryProvider dictionaries, String what, String displayName) {
    for (FieldVector vector : root.getFieldVectors()) {
      if (vector.getValueCount() != root.getRowCount()) {
        throw new ArrowFormatException(displayName, what + " has " + root.getRowCount() + " rows but column '"
            + vector.getName() + "' has " + vector.getValueCount());
      }
      validate(vector, what, displayName);
      checkDictionaryIndices(vector, dictionaries, what, displayName);
    }
  }

  static void validate(ValueVector vector, String what, String displayName) {
    try {
      StructuralValidation.validate(vector);
      vector.accept(new FullDataValidation(), null);
    } catch (RuntimeException e) {
      throw new ArrowFormatException(displayName,
          what + ", column '" + vector.getName() + "' is invalid: " + e.getMessage(), e);
    }
    checkDecimalPrecision(vector, what, displayName);
  }

  /**
   * Spark refuses a decimal wider than its type's precision (and Arrow Java does not check
   * on load), so such a value would fail mid-query, far from the file; fail here instead.
   */
  private static void checkDecimalPrecision(ValueVector vector, String what, String displayName) {
    if (vector instanceof DecimalVector || vector instanceof Decimal256Vector) {
      ArrowType.Decimal type = (ArrowType.Decimal) vector.getField().getType();
      BigInteger bound = BigInteger.TEN.pow(type.getPrecision());
      long smallBound = type.getPrecision() < 19 ? bound.longValueExact() : Long.MAX_VALUE;
      int width = type.getBitWidth() / 8;
      ArrowBuf data = ((BaseFixedWidthVector) vector).getDataBuffer();
      for (int i = 0; i < vector.getValueCount(); i++) {
        if (vector.isNull(i)) {
          continue;
        }
        long at = (long) i * width;
        long low = data.getLong(at);
        boolean fitsLong = true;
        for (int word = 1; word < width / 8; word++) {
          fitsLong &= data.getLong(at + word * 8L) == (low >> 63);
        }
        // Any long has at most 19 digits, so a long value only needs checking below precision 19.
        if (fitsLong && (type.getPrecision() >= 19 || (low > -smallBound && low < smallBound))) {
          continue;
        }
        BigDecimal value = (BigDecimal) vector.getObject(i);
        if (value.unscaledValue().abs().compareTo(bound) >= 0) {
          throw new ArrowFormatException(displayName, what + ", column '" + vector.getName() + "' row " + i
              + " holds " + value + ", more digits than its type " + type + " allows");
        }
      }
    }
    if (vector instanceof FieldVector) {
      for (FieldVector child : ((FieldVector) vector).getChildrenFromFields()) {
        checkDecimalPrecision(child, what, displayName);
      }
    }
  }

  private static void checkDictionaryIndices(
      FieldVector vector, DictionaryProvider dictionaries, String what, String displayName) {
    DictionaryEncoding encoding = vector.getField().getDictionary();
    if (encoding != null) {
      Dictionary dictionary = dictionaries.lookup(encoding.getId());
      if (dictionary == null) {
        throw new ArrowFormatException(displayName, what + ", column '" + vector.getName()
            + "' refers to dictionary " + encoding.getId() + ", which the data never defined");
      }
      long size = dictionary.getVector().getValueCount();
      BaseIntVector indices = (BaseIntVector) vector;
      for (int i = 0; i < vector.getValueCount(); i++) {
        if (!vector.isNull(i)) {
          long index = indices.getValueAsLong(i);
          if (index < 0 || index >= size) {
            throw new ArrowFormatException(displayName, what + ", column '" + vector.getName() + "' row " + i
                + " has dictionary index " + index + " outside the dictionary's " + size + " values");
          }
        }
      }
    }
    for (FieldVector child : vector.getChildrenFromFields()) {
      checkDictionaryIndices(child, dictionaries, what, displayName);
    }
  }
}
