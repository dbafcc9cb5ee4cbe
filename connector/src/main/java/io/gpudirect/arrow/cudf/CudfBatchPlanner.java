package io.gpudirect.arrow.cudf;

import ai.rapids.cudf.DType;
import io.gpudirect.arrow.ArrowFormatException;
import io.gpudirect.arrow.BufferDecompression;
import io.gpudirect.arrow.Failures;
import io.gpudirect.arrow.FileFooter;
import io.gpudirect.arrow.StagedBytes;
import io.gpudirect.arrow.cudf.CudfBatchPlan.Column;
import io.gpudirect.arrow.cudf.CudfBatchPlan.Kind;
import io.gpudirect.arrow.cudf.CudfBatchPlan.Slice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SeekableByteChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.vector.TypeLayout;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * The host half of reading a batch into cuDF: walks the selected fields through the batch's
 * field nodes and buffers, and checks everything a GPU kernel would otherwise trust — node
 * lengths, buffer sizes, offsets (start at 0, never decrease, end inside their child), list
 * rows that are null yet not empty, dictionary indices against their dictionary, and the
 * declared length of every compressed buffer (bounded by what its rows need before anything is
 * allocated). Compressed buffers are decompressed into {@link StagedBytes}, as are offsets
 * that must be rewritten. Needs no GPU, so all of it is tested in CI.
 */
final class CudfBatchPlanner {
  /** Writers may pad a buffer; more than this beyond what the rows need is refused as a lie. */
  private static final long PADDING = 64;

  private final SeekableByteChannel channel;
  private final String displayName;
  private final RecordBatch batch;
  private final long bodyOffset;
  private final long bodyLength;
  /** The codec of a compressed body, or -1. */
  private final byte codec;
  private final Map<Long, Long> dictionarySizes;
  private final StagedBytes staged;
  private ByteBuffer storedBody;
  private boolean needsBody;
  private int node;
  private int buffer;

  private CudfBatchPlanner(SeekableByteChannel channel, ArrowBlock block, RecordBatch batch,
      Map<Long, Long> dictionarySizes, String displayName) {
    this.channel = channel;
    this.displayName = displayName;
    this.batch = batch;
    this.bodyOffset = block.getOffset() + block.getMetadataLength();
    this.bodyLength = block.getBodyLength();
    this.codec = batch.compression() == null ? -1 : batch.compression().codec();
    this.dictionarySizes = dictionarySizes;
    this.staged = new StagedBytes(displayName);
  }

  /**
   * Checks batch {@code batch} (whose metadata MessageCheck has bounded by its body) for the
   * {@code selected} top-level {@code fields}.
   *
   * @param dictionarySizes the values of each dictionary in effect for this batch, by id
   */
  static CudfBatchPlan plan(SeekableByteChannel channel, ArrowBlock block, RecordBatch batch, List<Field> fields,
      int[] selected, Map<Long, Long> dictionarySizes, String where, String displayName) throws IOException {
    try {
      return new CudfBatchPlanner(channel, block, batch, dictionarySizes, displayName).plan(fields, selected, where);
    } catch (IOException | ArrowFormatException e) {
      throw e;
    } catch (RuntimeException | StackOverflowError e) {
      throw Failures.named(displayName, where + " has malformed metadata", e);
    }
  }

  private CudfBatchPlan plan(List<Field> fields, int[] selected, String where) throws IOException {
    if (codec >= 0) {
      BufferDecompression.checkCodec(codec, where, displayName);
      if (batch.compression().method() != org.apache.arrow.flatbuf.BodyCompressionMethod.BUFFER) {
        throw new ArrowFormatException(displayName, where + " uses body compression method "
            + batch.compression().method() + "; Arrow IPC defines only BUFFER");
      }
    }
    int[][] positions = positions(fields, where);
    long rows = batch.length();
    List<Column> columns = new ArrayList<>();
    for (int i : selected) {
      node = positions[i][0];
      buffer = positions[i][1];
      columns.add(column(fields.get(i), rows, where + ", column '" + fields.get(i).getName() + "'"));
    }
    return new CudfBatchPlan(rows, columns, needsBody, staged.array(), staged.size());
  }

  /** Where each top-level field's nodes and buffers start in the batch's flattened lists. */
  private int[][] positions(List<Field> fields, String where) {
    int[][] positions = new int[fields.size()][];
    int n = 0;
    int b = 0;
    for (int i = 0; i < fields.size(); i++) {
      positions[i] = new int[] {n, b};
      n += nodeCount(fields.get(i));
      b += bufferCount(fields.get(i));
    }
    if (n > batch.nodesLength() || b > batch.buffersLength()) {
      throw new ArrowFormatException(displayName, where + " has " + batch.nodesLength() + " field nodes and "
          + batch.buffersLength() + " buffers, fewer than its schema needs (" + n + " and " + b + ")");
    }
    return positions;
  }

  /** A dictionary-encoded field is written as its indices alone: one node, two buffers. */
  static int nodeCount(Field f) {
    if (f.getDictionary() != null) {
      return 1;
    }
    int n = 1;
    for (Field c : f.getChildren()) {
      n += nodeCount(c);
    }
    return n;
  }

  static int bufferCount(Field f) {
    if (f.getDictionary() != null) {
      return 2;
    }
    int n = TypeLayout.getTypeBufferCount(f.getType());
    for (Field c : f.getChildren()) {
      n += bufferCount(c);
    }
    return n;
  }

  private Column column(Field field, long rows, String where) throws IOException {
    if (node >= batch.nodesLength()) {
      throw new ArrowFormatException(displayName, where + " has no field node left in the batch");
    }
    FieldNode n = batch.nodes(new FieldNode(), node++);
    if (n.length() != rows) {
      throw new ArrowFormatException(displayName, where + " has " + n.length() + " values where " + rows + " belong");
    }
    long nulls = n.nullCount();
    String name = field.getName();
    if (field.getType().getTypeID() == ArrowType.ArrowTypeID.Null && field.getDictionary() == null) {
      // Arrow writes no buffers for a Null column, not even a validity bitmap.
      return new Column(name, Kind.NULL, DType.INT8, rows, rows, null, null, null, List.of(), -1);
    }
    int validityBuffer = buffer++;
    Slice validity = nulls == 0 ? null : resolve(validityBuffer, bitBytes(rows), where + ": validity");
    if (field.getDictionary() != null) {
      DType index = CudfTypeMapping.indexType(field, displayName);
      Slice indices = resolve(buffer++, rows * index.getSizeInBytes(), where + ": dictionary indices");
      long id = field.getDictionary().getId();
      Long size = dictionarySizes.get(id);
      if (size == null) {
        throw new ArrowFormatException(displayName, where + " refers to dictionary " + id
            + ", which no dictionary batch before it defines");
      }
      checkIndices(indices, validity, index, rows, size, where);
      return new Column(name, Kind.DICTIONARY, index, rows, nulls, validity, indices, null, List.of(), id);
    }
    ArrowType type = field.getType();
    switch (type.getTypeID()) {
      case Bool:
        return new Column(name, Kind.BOOL, DType.BOOL8, rows, nulls, validity,
            resolve(buffer++, bitBytes(rows), where + ": values"), null, List.of(), -1);
      case Utf8:
      case LargeUtf8:
      case Binary:
      case LargeBinary: {
        boolean wide = type.getTypeID() == ArrowType.ArrowTypeID.LargeUtf8
            || type.getTypeID() == ArrowType.ArrowTypeID.LargeBinary;
        boolean binary = type.getTypeID() == ArrowType.ArrowTypeID.Binary
            || type.getTypeID() == ArrowType.ArrowTypeID.LargeBinary;
        Offsets offsets = offsets(buffer++, rows, wide, binary ? validity : null, Long.MAX_VALUE, where);
        Slice bytes = resolve(buffer++, offsets.last(), where + (binary ? ": bytes" : ": characters"));
        if (!binary) {
          return new Column(name, Kind.STRING, DType.STRING, rows, nulls, validity, bytes, offsets.slice(), List.of(), -1);
        }
        return list(name, rows, nulls, validity, offsets.slice(), bytesColumn(offsets.last(), bytes));
      }
      case FixedSizeBinary: {
        int width = ((ArrowType.FixedSizeBinary) type).getByteWidth();
        Slice bytes = resolve(buffer++, rows * width, where + ": bytes");
        return list(name, rows, nulls, validity, evenOffsets(rows, width, where), bytesColumn(rows * width, bytes));
      }
      case List:
      case LargeList:
      case Map: {
        Offsets offsets = offsets(buffer++, rows, type.getTypeID() == ArrowType.ArrowTypeID.LargeList, validity,
            nextNodeLength(where), where);
        Field child = field.getChildren().get(0);
        Column values = column(child, nextNodeLength(where), where + "." + child.getName());
        return list(name, rows, nulls, validity, offsets.slice(), values);
      }
      case FixedSizeList: {
        int size = ((ArrowType.FixedSizeList) type).getListSize();
        Field child = field.getChildren().get(0);
        Slice offsets = evenOffsets(rows, size, where);
        return list(name, rows, nulls, validity, offsets, column(child, rows * size, where + "." + child.getName()));
      }
      case Struct: {
        List<Column> children = new ArrayList<>();
        for (Field child : field.getChildren()) {
          children.add(column(child, rows, where + "." + child.getName()));
        }
        return new Column(name, Kind.STRUCT, DType.STRUCT, rows, nulls, validity, null, null, children, -1);
      }
      default: {
        DType fixed = CudfTypeMapping.of(field, displayName);
        Slice data = resolve(buffer++, rows * fixed.getSizeInBytes(), where + ": values");
        return new Column(name, Kind.FIXED, fixed, rows, nulls, validity, data, null, List.of(), -1);
      }
    }
  }

  private static Column list(String name, long rows, long nulls, Slice validity, Slice offsets, Column child) {
    return new Column(name, Kind.LIST, DType.LIST, rows, nulls, validity, null, offsets, List.of(child), -1);
  }

  private static Column bytesColumn(long count, Slice bytes) {
    return new Column("bytes", Kind.FIXED, DType.UINT8, count, 0, null, bytes, null, List.of(), -1);
  }

  private long nextNodeLength(String where) {
    if (node >= batch.nodesLength()) {
      throw new ArrowFormatException(displayName, where + " has no field node left for its values");
    }
    return batch.nodes(new FieldNode(), node).length();
  }

  private static long bitBytes(long rows) {
    return (rows + 7) / 8;
  }

  /**
   * Buffer {@code index} holding at least {@code needed} bytes: a slice of the stored body, or,
   * in a compressed body, its decompression into the staged bytes. The declared uncompressed
   * length must cover {@code needed} and may exceed it by padding only, so a hostile prefix is
   * refused before a byte is allocated for it.
   */
  private Slice resolve(int index, long needed, String what) throws IOException {
    if (index >= batch.buffersLength()) {
      throw new ArrowFormatException(displayName, what + " has no buffer left in the batch");
    }
    Buffer b = batch.buffers(new Buffer(), index);
    if (codec < 0) {
      if (b.length() < needed) {
        throw new ArrowFormatException(displayName, what + " has " + b.length() + " bytes, fewer than the "
            + needed + " needed");
      }
      return body(b.offset(), needed);
    }
    if (b.length() == 0 && needed == 0) {
      return Slice.EMPTY;
    }
    ByteBuffer stored = storedBody().duplicate().position((int) b.offset()).limit((int) (b.offset() + b.length()))
        .slice();
    long bound = (needed + PADDING - 1) / PADDING * PADDING;
    long declared = BufferDecompression.declaredLength(stored, bound, what, displayName);
    if (declared < needed) {
      throw new ArrowFormatException(displayName, what + " holds " + declared + " bytes uncompressed, fewer than the "
          + needed + " needed");
    }
    if (stored.remaining() >= BufferDecompression.PREFIX
        && stored.order(ByteOrder.LITTLE_ENDIAN).getLong(0) == BufferDecompression.NOT_COMPRESSED) {
      return body(b.offset() + BufferDecompression.PREFIX, needed);
    }
    int at = staged.reserve(declared, what);
    BufferDecompression.decompress(codec, stored, bound, staged.array(), at, what, displayName);
    return new Slice(true, at, needed);
  }

  private Slice body(long offset, long length) {
    if (length == 0) {
      return Slice.EMPTY;
    }
    needsBody = true;
    return new Slice(false, offset, length);
  }

  /** The whole stored body, read once, for compressed batches. */
  private ByteBuffer storedBody() throws IOException {
    if (storedBody == null) {
      if (bodyLength > BufferDecompression.MAX_BUFFER) {
        throw new ArrowFormatException(displayName, "a compressed batch body of " + bodyLength
            + " bytes is larger than the " + BufferDecompression.MAX_BUFFER + " this reader decompresses at once");
      }
      storedBody = FileFooter.readAt(channel, bodyOffset, (int) bodyLength, displayName);
    }
    return storedBody;
  }

  /** The bytes of a checked slice, on the host, little-endian. */
  private ByteBuffer read(Slice s) throws IOException {
    if (s.length() > BufferDecompression.MAX_BUFFER) {
      throw new ArrowFormatException(displayName, "a buffer of " + s.length() + " bytes is too large to check");
    }
    if (s.staged()) {
      return ByteBuffer.wrap(staged.array(), (int) s.offset(), (int) s.length()).slice().order(ByteOrder.LITTLE_ENDIAN);
    }
    if (storedBody != null) {
      return storedBody.duplicate().position((int) s.offset()).limit((int) (s.offset() + s.length())).slice()
          .order(ByteOrder.LITTLE_ENDIAN);
    }
    return FileFooter.readAt(channel, bodyOffset + s.offset(), (int) s.length(), displayName)
        .order(ByteOrder.LITTLE_ENDIAN);
  }

  /** Checked INT32 offsets and where they end. */
  private record Offsets(Slice slice, long last) {}

  /**
   * Offsets are read on the host: they must start at 0, never decrease and end by
   * {@code limit}, or cuDF would read outside the values; a null row must be empty, as cuDF
   * requires of nested columns. 64-bit offsets are narrowed into the staged bytes (cuDF's
   * offsets here are 32-bit).
   *
   * @param validity checked for null rows that are not empty; null to skip that check
   */
  private Offsets offsets(int index, long rows, boolean wide, Slice validity, long limit, String where)
      throws IOException {
    int width = wide ? 8 : 4;
    if (rows == 0) {
      // Writers may leave the offsets of an empty column out entirely; cuDF wants one 0.
      int at = staged.reserve(4, where + ": offsets");
      return new Offsets(new Slice(true, at, 4), 0);
    }
    Slice slice = resolve(index, (rows + 1) * width, where + ": offsets");
    ByteBuffer o = read(slice);
    ByteBuffer bits = validity == null ? null : read(validity);
    long previous = wide ? o.getLong(0) : o.getInt(0);
    if (previous != 0) {
      throw new ArrowFormatException(displayName, where + ": offsets start at " + previous + ", not 0");
    }
    for (int i = 1; i <= rows; i++) {
      long next = wide ? o.getLong(i * 8) : o.getInt(i * 4);
      if (next < previous) {
        throw new ArrowFormatException(displayName, where + ": offset " + i + " (" + next
            + ") is below the one before it (" + previous + ")");
      }
      if (bits != null && next != previous && (bits.get((i - 1) >>> 3) & (1 << ((i - 1) & 7))) == 0) {
        throw new ArrowFormatException(displayName, where + ": row " + (i - 1) + " is null but holds "
            + (next - previous) + " values, which cuDF does not allow in nested columns");
      }
      previous = next;
    }
    if (previous > limit) {
      throw new ArrowFormatException(displayName, where + ": offsets end at " + previous + ", past the " + limit
          + " values they index");
    }
    if (!wide) {
      return new Offsets(slice, previous);
    }
    if (previous > Integer.MAX_VALUE) {
      throw new ArrowFormatException(displayName, where + ": offsets end at " + previous
          + ", past the 32-bit offsets of cuDF columns; read fewer rows per batch");
    }
    int at = staged.reserve((rows + 1) * 4, where + ": narrowed offsets");
    ByteBuffer narrow = ByteBuffer.wrap(staged.array(), at, (int) (rows + 1) * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i <= rows; i++) {
      narrow.putInt((int) o.getLong(i * 8));
    }
    return new Offsets(new Slice(true, at, (rows + 1) * 4), previous);
  }

  /** Offsets 0, step, 2 step, ... for fixed-size lists and binaries, made in the staged bytes. */
  private Slice evenOffsets(long rows, long step, String where) {
    if (rows * step > Integer.MAX_VALUE) {
      throw new ArrowFormatException(displayName, where + " holds " + rows * step
          + " values, past the 32-bit offsets of cuDF columns; read fewer rows per batch");
    }
    int at = staged.reserve((rows + 1) * 4, where + ": offsets");
    ByteBuffer out = ByteBuffer.wrap(staged.array(), at, (int) (rows + 1) * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (long i = 0; i <= rows; i++) {
      out.putInt((int) (i * step));
    }
    return new Slice(true, at, (rows + 1) * 4);
  }

  /** Every index of a non-null row must name a value of the dictionary, or cuDF's gather reads outside it. */
  private void checkIndices(Slice indices, Slice validity, DType type, long rows, long size, String where)
      throws IOException {
    if (rows == 0) {
      return;
    }
    ByteBuffer values = read(indices);
    ByteBuffer bits = validity == null ? null : read(validity);
    int width = type.getSizeInBytes();
    boolean signed = type.equals(DType.INT8) || type.equals(DType.INT16) || type.equals(DType.INT32)
        || type.equals(DType.INT64);
    for (int i = 0; i < rows; i++) {
      if (bits != null && (bits.get(i >>> 3) & (1 << (i & 7))) == 0) {
        continue;
      }
      long index;
      switch (width) {
        case 1: index = signed ? values.get(i) : Byte.toUnsignedLong(values.get(i)); break;
        case 2: index = signed ? values.getShort(i * 2) : Short.toUnsignedLong(values.getShort(i * 2)); break;
        case 4: index = signed ? values.getInt(i * 4) : Integer.toUnsignedLong(values.getInt(i * 4)); break;
        default: index = values.getLong(i * 8); break;
      }
      // An unsigned 64-bit index past Long.MAX_VALUE reads as negative here and is refused too.
      if (index < 0 || index >= size) {
        throw new ArrowFormatException(displayName, where + ": row " + i + " has dictionary index "
            + (width == 8 && !signed && index < 0 ? Long.toUnsignedString(index) : index)
            + " outside the dictionary's " + size + " values");
      }
    }
  }
}
