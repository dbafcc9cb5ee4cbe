package io.gpudirect.arrow.cudf;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;

/**
 * Arrow Java's reading of a value, in the shape the cuDF path's columns are compared in: null;
 * a Boolean; a String; a fixed-width value as the hex of its little-endian bytes (exactly what
 * cuDF must hold); binary as a list of byte hexes (cuDF's LIST&lt;UINT8&gt;); lists, maps and
 * structs as lists; a dictionary-encoded value as the dictionary's value.
 */
final class ReferenceValues {
  private static final HexFormat HEX = HexFormat.of();

  private ReferenceValues() {}

  static Object value(ValueVector v, int i, DictionaryProvider dictionaries) {
    if (v.isNull(i)) {
      return null;
    }
    DictionaryEncoding encoding = v.getField().getDictionary();
    if (encoding != null) {
      ValueVector values = dictionaries.lookup(encoding.getId()).getVector();
      return value(values, (int) ((BaseIntVector) v).getValueAsLong(i), dictionaries);
    }
    if (v instanceof BitVector) {
      return ((BitVector) v).get(i) == 1;
    }
    if (v instanceof VarCharVector) {
      return new String(((VarCharVector) v).get(i), StandardCharsets.UTF_8);
    }
    if (v instanceof LargeVarCharVector) {
      return new String(((LargeVarCharVector) v).get(i), StandardCharsets.UTF_8);
    }
    if (v instanceof VarBinaryVector) {
      return bytes(((VarBinaryVector) v).get(i));
    }
    if (v instanceof LargeVarBinaryVector) {
      return bytes(((LargeVarBinaryVector) v).get(i));
    }
    if (v instanceof FixedSizeBinaryVector) {
      return bytes(((FixedSizeBinaryVector) v).get(i));
    }
    if (v instanceof ListVector) { // Maps too: a MapVector is a ListVector of entries.
      ListVector list = (ListVector) v;
      ArrowBuf offsets = list.getOffsetBuffer();
      return range(list.getDataVector(), offsets.getInt(i * 4L), offsets.getInt((i + 1) * 4L), dictionaries);
    }
    if (v instanceof LargeListVector) {
      LargeListVector list = (LargeListVector) v;
      ArrowBuf offsets = list.getOffsetBuffer();
      return range(list.getDataVector(), offsets.getLong(i * 8L), offsets.getLong((i + 1) * 8L), dictionaries);
    }
    if (v instanceof FixedSizeListVector) {
      FixedSizeListVector list = (FixedSizeListVector) v;
      long size = list.getListSize();
      return range(list.getDataVector(), i * size, (i + 1) * size, dictionaries);
    }
    if (v instanceof StructVector) {
      List<Object> fields = new ArrayList<>();
      for (ValueVector child : ((StructVector) v).getChildrenFromFields()) {
        fields.add(value(child, i, dictionaries));
      }
      return fields;
    }
    BaseFixedWidthVector fixed = (BaseFixedWidthVector) v;
    int width = fixed.getTypeWidth();
    byte[] raw = new byte[width];
    fixed.getDataBuffer().getBytes((long) i * width, raw);
    return HEX.formatHex(raw);
  }

  private static List<Object> range(ValueVector child, long from, long to, DictionaryProvider dictionaries) {
    List<Object> values = new ArrayList<>();
    for (long j = from; j < to; j++) {
      values.add(value(child, (int) j, dictionaries));
    }
    return values;
  }

  static List<Object> bytes(byte[] bytes) {
    List<Object> out = new ArrayList<>();
    for (byte b : bytes) {
      out.add(HEX.toHexDigits(b));
    }
    return out;
  }

  static String hex(byte[] raw) {
    return HEX.formatHex(raw);
  }
}
