package io.gpudirect.spark.arrow;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.Table;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SeekableByteChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.vector.TypeLayout;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.ipc.message.ArrowFooter;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * An Arrow IPC file or stream into cuDF without a decode pass: each record batch's body is fetched
 * into one device buffer, and cuDF columns are made over slices of it, because Arrow's
 * layouts are cuDF's for the types of {@link CudfTypeMapping}. Every length, offset and
 * string offset is checked on the host first, so a malformed file is refused before any
 * GPU code reads a byte of it.
 */
public final class CudfArrowIpcReader {
  /** Fills a device buffer with the file's bytes from an offset (socket → pinned chunk → GPU). */
  public interface BodyFetcher {
    void fetch(long fileOffset, DeviceMemoryBuffer dst);
  }

  private final SeekableByteChannel channel;
  private final long size;
  private final String displayName;
  private final boolean stream;
  private final BodyFetcher fetcher;

  /** @param stream whether the bytes are the IPC stream format (else the file format) */
  public CudfArrowIpcReader(SeekableByteChannel channel, long size, String displayName, boolean stream,
      BodyFetcher fetcher) {
    this.channel = channel;
    this.size = size;
    this.displayName = displayName;
    this.stream = stream;
    this.fetcher = fetcher;
  }

  /** Every record batch of the file, with only the named top-level columns (all when none). */
  public Table read(String... columns) {
    try {
      List<Field> fields;
      List<ArrowBlock> blocks;
      if (stream) {
        StreamLayout layout = StreamLayout.scan(channel, size, displayName);
        fields = layout.schema().getFields();
        blocks = layout.recordBatches();
      } else {
        ArrowFooter footer = footer();
        if (!footer.getDictionaries().isEmpty()) {
          throw new ArrowFormatException(displayName, "it has dictionary batches, which are not read into cuDF yet");
        }
        fields = footer.getSchema().getFields();
        blocks = footer.getRecordBatches();
      }
      int[] selected = select(fields, columns);
      DType[] types = new DType[selected.length];
      for (int i = 0; i < selected.length; i++) {
        types[i] = CudfTypeMapping.of(fields.get(selected[i]), displayName);
      }
      List<Table> batches = new ArrayList<>();
      try {
        for (int b = 0; b < blocks.size(); b++) {
          batches.add(readBatch(blocks.get(b), "record batch " + b, fields, selected, types));
        }
        if (batches.isEmpty()) {
          throw new ArrowFormatException(displayName, "it has no record batches, so there is no table to make");
        }
        return batches.size() == 1 ? batches.remove(0) : Table.concatenate(batches.toArray(new Table[0]));
      } finally {
        batches.forEach(Table::close);
      }
    } catch (IOException e) {
      throw new ArrowFormatException(displayName, "cannot read it: " + e.getMessage(), e);
    }
  }

  /** The footer, with whatever hostile flatbuffers provoke in Arrow's accessors named as such. */
  private ArrowFooter footer() throws IOException {
    try {
      ArrowFooter footer = FileFooter.read(channel, size, displayName);
      footer.getSchema().getFields().forEach(Field::getType);
      return footer;
    } catch (IOException | ArrowFormatException e) {
      throw e;
    } catch (RuntimeException | StackOverflowError e) {
      throw Failures.named(displayName, "its footer is malformed", e);
    }
  }

  private int[] select(List<Field> fields, String[] columns) {
    if (columns.length == 0) {
      int[] all = new int[fields.size()];
      for (int i = 0; i < all.length; i++) {
        all[i] = i;
      }
      return all;
    }
    int[] picked = new int[columns.length];
    for (int c = 0; c < columns.length; c++) {
      picked[c] = -1;
      for (int i = 0; i < fields.size() && picked[c] < 0; i++) {
        if (fields.get(i).getName().equals(columns[c])) {
          picked[c] = i;
        }
      }
      if (picked[c] < 0) {
        throw new ArrowFormatException(displayName, "it has no column '" + columns[c] + "'");
      }
    }
    return picked;
  }

  /** Where one field's nodes and buffers start in a batch's flattened lists. */
  private record Position(int node, int buffer) {}

  /** A batch whose metadata has been checked: its rows and where each column's buffers lie. */
  private record BatchPlan(long rows, List<ColumnPlan> columns) {}

  private Table readBatch(ArrowBlock block, String where, List<Field> fields, int[] selected, DType[] types)
      throws IOException {
    BatchPlan checked;
    try {
      checked = plan(block, where, fields, selected, types);
    } catch (IOException | ArrowFormatException e) {
      throw e;
    } catch (RuntimeException | StackOverflowError e) {
      throw Failures.named(displayName, where + " has malformed metadata", e);
    }
    long rows = checked.rows();
    List<ColumnPlan> plans = checked.columns();
    long bodyOffset = block.getOffset() + block.getMetadataLength();
    if (rows == 0 || block.getBodyLength() == 0) {
      return emptyTable(types);
    }
    try (DeviceMemoryBuffer body = DeviceMemoryBuffer.allocate(block.getBodyLength())) {
      fetcher.fetch(bodyOffset, body);
      ColumnVector[] columns = new ColumnVector[selected.length];
      try {
        for (int i = 0; i < selected.length; i++) {
          columns[i] = column(body, types[i], rows, plans.get(i));
        }
        return new Table(columns);
      } finally {
        for (ColumnVector c : columns) {
          if (c != null) {
            c.close();
          }
        }
      }
    }
  }

  /** Everything is checked before the body is fetched or any column is made. */
  private BatchPlan plan(ArrowBlock block, String where, List<Field> fields, int[] selected, DType[] types)
      throws IOException {
    Message message = FileFooter.readBlockMessage(channel, block, where, displayName);
    if (message.headerType() != org.apache.arrow.flatbuf.MessageHeader.RecordBatch) {
      throw new ArrowFormatException(displayName, where + " is not a record batch");
    }
    RecordBatch batch = (RecordBatch) message.header(new RecordBatch());
    if (batch.compression() != null) {
      throw new ArrowFormatException(displayName, where + " is compressed, which is not read into cuDF yet");
    }
    long rows = batch.length();
    Position[] positions = positions(fields, batch, where);
    long bodyOffset = block.getOffset() + block.getMetadataLength();
    List<ColumnPlan> plans = new ArrayList<>();
    for (int i = 0; i < selected.length; i++) {
      plans.add(plan(batch, positions[selected[i]], types[i], rows, bodyOffset,
          where + ", column '" + fields.get(selected[i]).getName() + "'"));
    }
    return new BatchPlan(rows, plans);
  }

  private Position[] positions(List<Field> fields, RecordBatch batch, String where) {
    Position[] positions = new Position[fields.size()];
    int node = 0;
    int buffer = 0;
    for (int i = 0; i < fields.size(); i++) {
      positions[i] = new Position(node, buffer);
      node += nodeCount(fields.get(i));
      buffer += bufferCount(fields.get(i));
    }
    if (node > batch.nodesLength() || buffer > batch.buffersLength()) {
      throw new ArrowFormatException(displayName, where + " has " + batch.nodesLength() + " field nodes and "
          + batch.buffersLength() + " buffers, fewer than its schema needs (" + node + " and " + buffer + ")");
    }
    return positions;
  }

  private static int nodeCount(Field f) {
    int n = 1;
    for (Field c : f.getChildren()) {
      n += nodeCount(c);
    }
    return n;
  }

  private static int bufferCount(Field f) {
    int n = TypeLayout.getTypeBufferCount(f.getType());
    for (Field c : f.getChildren()) {
      n += bufferCount(c);
    }
    return n;
  }

  /** A checked byte range of the body. */
  private record Slice(long offset, long length) {}

  /** Where one column's buffers lie in the body; {@code validity} and {@code offsets} may be null. */
  private record ColumnPlan(Slice validity, long nullCount, Slice data, Slice offsets) {}

  private ColumnPlan plan(RecordBatch batch, Position at, DType type, long rows, long bodyOffset, String where)
      throws IOException {
    FieldNode node = batch.nodes(new FieldNode(), at.node());
    if (node.length() != rows) {
      throw new ArrowFormatException(displayName, where + " has " + node.length() + " values in a batch of " + rows + " rows");
    }
    Slice valid = node.nullCount() == 0 ? null
        : checked(batch.buffers(new Buffer(), at.buffer()), (rows + 7) / 8, where + ": validity");
    Buffer data = batch.buffers(new Buffer(), at.buffer() + 1);
    if (type.equals(DType.BOOL8)) {
      return new ColumnPlan(valid, node.nullCount(), checked(data, (rows + 7) / 8, where + ": values"), null);
    }
    if (type.equals(DType.STRING)) {
      Slice offsets = checked(data, (rows + 1) * 4, where + ": offsets");
      long last = checkStringOffsets(bodyOffset + offsets.offset(), rows,
          batch.buffers(new Buffer(), at.buffer() + 2).length(), where);
      Slice chars = checked(batch.buffers(new Buffer(), at.buffer() + 2), last, where + ": characters");
      return new ColumnPlan(valid, node.nullCount(), chars, offsets);
    }
    return new ColumnPlan(valid, node.nullCount(), checked(data, rows * type.getSizeInBytes(), where + ": values"), null);
  }

  /** MessageCheck already bounded every buffer by the body; here its size is checked. */
  private Slice checked(Buffer b, long needed, String what) {
    if (b.length() < needed) {
      throw new ArrowFormatException(displayName, what + " has " + b.length() + " bytes, fewer than the " + needed + " needed");
    }
    return new Slice(b.offset(), needed);
  }

  /**
   * String offsets are read on the host: they must start at 0, never decrease, and end inside
   * the character buffer, or cuDF would read outside it. Returns the last offset.
   */
  private long checkStringOffsets(long fileOffset, long rows, long charsLength, String where) throws IOException {
    ByteBuffer offsets = FileFooter.readAt(channel, fileOffset, (int) ((rows + 1) * 4), displayName)
        .order(ByteOrder.LITTLE_ENDIAN);
    int previous = offsets.getInt(0);
    if (previous != 0) {
      throw new ArrowFormatException(displayName, where + ": string offsets start at " + previous + ", not 0");
    }
    for (int i = 1; i <= rows; i++) {
      int next = offsets.getInt(i * 4);
      if (next < previous) {
        throw new ArrowFormatException(displayName, where + ": string offset " + i + " (" + next
            + ") is below the one before it (" + previous + ")");
      }
      previous = next;
    }
    if (previous > charsLength) {
      throw new ArrowFormatException(displayName, where + ": string offsets end at " + previous
          + ", past the " + charsLength + " bytes of characters");
    }
    return previous;
  }

  private ColumnVector column(DeviceMemoryBuffer body, DType type, long rows, ColumnPlan plan) {
    if (type.equals(DType.BOOL8)) {
      return booleans(body, rows, plan.data(), plan.validity());
    }
    Slice v = plan.validity();
    DeviceMemoryBuffer validity = v == null ? null : body.slice(v.offset(), v.length());
    try {
      Slice d = plan.data();
      // cuDF loads values aligned to their width (16 bytes for DECIMAL128); Arrow promises 8.
      boolean misaligned = !type.equals(DType.STRING) && d.offset() % type.getSizeInBytes() != 0;
      DeviceMemoryBuffer data = misaligned ? aligned(body, d) : body.slice(d.offset(), d.length());
      DeviceMemoryBuffer offsets = plan.offsets() == null ? null
          : body.slice(plan.offsets().offset(), plan.offsets().length());
      // The column takes over the slices; each holds a reference on the body.
      return new ColumnVector(type, rows, Optional.of(plan.nullCount()), data, validity, offsets);
    } catch (RuntimeException e) {
      if (validity != null) {
        validity.close();
      }
      throw e;
    }
  }

  /** A copy of a misaligned slice into its own (256-byte aligned) buffer. */
  private static DeviceMemoryBuffer aligned(DeviceMemoryBuffer body, Slice s) {
    DeviceMemoryBuffer copy = DeviceMemoryBuffer.allocate(s.length());
    copy.copyFromDeviceBufferAsync(0, body, s.offset(), s.length(), ai.rapids.cudf.Cuda.DEFAULT_STREAM);
    ai.rapids.cudf.Cuda.DEFAULT_STREAM.sync();
    return copy;
  }

  /**
   * Arrow packs booleans into bits, cuDF keeps one byte each. The bits are handed to cuDF as
   * the validity mask of a placeholder column, whose "is not null" is then exactly the values;
   * the real validity is applied after. All of it runs on the GPU.
   */
  private static ColumnVector booleans(DeviceMemoryBuffer body, long rows, Slice bits, Slice validity) {
    try (DeviceMemoryBuffer placeholder = DeviceMemoryBuffer.allocate(rows);
         ColumnVector asMask = new ColumnVector(DType.INT8, rows, Optional.empty(), placeholder.slice(0, rows),
             body.slice(bits.offset(), bits.length()), null);
         ColumnVector values = asMask.isNotNull()) {
      if (validity == null) {
        return values.incRefCount();
      }
      // Each placeholder column owns the slices it is given, so every slice has one owner.
      try (DeviceMemoryBuffer again = DeviceMemoryBuffer.allocate(rows);
           ColumnVector nulls = new ColumnVector(DType.INT8, rows, Optional.empty(), again.slice(0, rows),
               body.slice(validity.offset(), validity.length()), null)) {
        return values.mergeAndSetValidity(ai.rapids.cudf.BinaryOp.BITWISE_AND, nulls);
      }
    }
  }

  private static Table emptyTable(DType[] types) {
    ColumnVector[] columns = new ColumnVector[types.length];
    try {
      for (int i = 0; i < types.length; i++) {
        columns[i] = ColumnVector.empty(new ai.rapids.cudf.HostColumnVector.BasicType(true, types[i]));
      }
      return new Table(columns);
    } finally {
      for (ColumnVector c : columns) {
        if (c != null) {
          c.close();
        }
      }
    }
  }
}
