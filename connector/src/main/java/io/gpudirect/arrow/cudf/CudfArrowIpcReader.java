package io.gpudirect.arrow.cudf;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.ColumnView;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.HostColumnVector;
import ai.rapids.cudf.HostMemoryBuffer;
import ai.rapids.cudf.OutOfBoundsPolicy;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import io.gpudirect.arrow.cudf.CudfBatchPlan.Column;
import io.gpudirect.arrow.cudf.CudfBatchPlan.Kind;
import io.gpudirect.arrow.cudf.CudfBatchPlan.Slice;
import io.gpudirect.arrow.ArrowFormatException;
import io.gpudirect.gpu.DeviceAllocator;
import io.gpudirect.gpu.HostMemoryAllocator;
import java.math.BigInteger;
import java.nio.channels.SeekableByteChannel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * An Arrow IPC file or stream into cuDF without a decode pass: each record batch's body is
 * fetched into one device buffer, and cuDF columns are made over slices of it, because
 * Arrow's layouts are cuDF's for most types (docs/arrow-type-mapping.md). All checking — and
 * the decompression of compressed bodies — happens on the host first ({@link CudfReadPlan}),
 * so a malformed file is refused before any GPU code reads a byte of it. What the host
 * staged (decompressed buffers, rewritten offsets) is uploaded next to the body.
 *
 * <p>Every device buffer comes from the {@link DeviceAllocator} it is given, so it counts
 * against that allocator's limit until cuDF closes the last column over it.
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
  private final DeviceAllocator device;
  private final HostMemoryAllocator host;

  /**
   * @param stream whether the bytes are the IPC stream format (else the file format)
   * @param device where the bodies' device buffers come from, and are charged
   * @param host where decompressed bytes are staged on their way to the device, and charged
   */
  public CudfArrowIpcReader(SeekableByteChannel channel, long size, String displayName, boolean stream,
      BodyFetcher fetcher, DeviceAllocator device, HostMemoryAllocator host) {
    this.channel = channel;
    this.size = size;
    this.displayName = displayName;
    this.stream = stream;
    this.fetcher = fetcher;
    this.device = device;
    this.host = host;
  }

  /** Every record batch of the file, with only the named top-level columns (all when none). */
  public Table read(String... columns) {
    return read(0, Integer.MAX_VALUE, columns);
  }

  /**
   * Record batches [firstBatch, firstBatch + batchCount) only, as one table (a Spark slice of
   * the file); the dictionaries that come before them are loaded too, since they may use them.
   */
  public Table read(int firstBatch, int batchCount, String... columns) {
    CudfReadPlan plan = CudfReadPlan.of(channel, size, displayName, stream, firstBatch, batchCount, columns);
    Map<Long, ColumnVector> dictionaries = new HashMap<>();
    List<Table> batches = new ArrayList<>();
    try {
      for (CudfReadPlan.Step step : plan.steps()) {
        if (step.isDictionary()) {
          ColumnVector values;
          try (DeviceBody body = upload(step)) {
            values = column(step.plan().columns().get(0), body, dictionaries);
          }
          ColumnVector replaced = dictionaries.put(step.dictionaryId(), values);
          if (replaced != null) {
            replaced.close();
          }
        } else {
          batches.add(table(step, plan.fields(), dictionaries));
        }
      }
      if (batches.isEmpty()) {
        return emptyTable(plan.fields());
      }
      return batches.size() == 1 ? batches.remove(0) : Table.concatenate(batches.toArray(new Table[0]));
    } finally {
      batches.forEach(Table::close);
      dictionaries.values().forEach(ColumnVector::close);
    }
  }

  private Table table(CudfReadPlan.Step step, List<Field> fields, Map<Long, ColumnVector> dictionaries) {
    CudfBatchPlan plan = step.plan();
    if (plan.rows() == 0) {
      return emptyTable(fields);
    }
    try (DeviceBody body = upload(step)) {
      ColumnVector[] columns = new ColumnVector[plan.columns().size()];
      try {
        for (int i = 0; i < columns.length; i++) {
          columns[i] = column(plan.columns().get(i), body, dictionaries);
          refuseWideDecimals(fields.get(i), columns[i], step.where());
        }
        return new Table(columns);
      } finally {
        closeAll(columns);
      }
    }
  }

  /** The batch's stored body (when a column reads it) and staged bytes, on the device. */
  /**
   * Bytes allocated past the end of every device buffer whose slices cuDF may take as null
   * masks: cuDF copies and reads a mask in whole 64-byte units, so a mask that ends a buffer
   * (Arrow pads it to 8 bytes only) would otherwise be read past the allocation, which CUDA
   * refuses as an invalid argument.
   */
  private static final long MASK_SLACK = 64;

  private DeviceBody upload(CudfReadPlan.Step step) {
    CudfBatchPlan plan = step.plan();
    ArrowBlock block = step.block();
    DeviceMemoryBuffer body = null;
    DeviceMemoryBuffer staged = null;
    try {
      if (plan.needsBody()) {
        body = device.allocate(block.getBodyLength() + MASK_SLACK, "Arrow IPC body of " + displayName);
        try (DeviceMemoryBuffer fill = body.slice(0, block.getBodyLength())) {
          fetcher.fetch(block.getOffset() + block.getMetadataLength(), fill);
        }
      }
      if (plan.stagedLength() > 0) {
        staged = device.allocate(plan.stagedLength() + MASK_SLACK, "decompressed Arrow IPC buffers of " + displayName);
        try (HostMemoryBuffer bytes = host.allocate(plan.stagedLength(),
            "decompressed Arrow IPC buffers of " + displayName + " on their way to the device")) {
          bytes.setBytes(0, plan.staged(), 0, plan.stagedLength());
          staged.copyFromHostBuffer(bytes, Cuda.DEFAULT_STREAM);
        }
      }
      return new DeviceBody(body, staged);
    } catch (RuntimeException e) {
      if (body != null) {
        body.close();
      }
      if (staged != null) {
        staged.close();
      }
      throw e;
    }
  }

  /** The device copies of a batch's bytes; slices taken from it hold their own references. */
  private record DeviceBody(DeviceMemoryBuffer body, DeviceMemoryBuffer staged) implements AutoCloseable {
    /** A new reference to the slice's bytes, or null for an empty slice. */
    DeviceMemoryBuffer slice(Slice s) {
      if (s == null || s.length() == 0) {
        return null;
      }
      return (s.staged() ? staged : body).slice(s.offset(), s.length());
    }

    DeviceMemoryBuffer of(Slice s) {
      return s.staged() ? staged : body;
    }

    @Override
    public void close() {
      if (body != null) {
        body.close();
      }
      if (staged != null) {
        staged.close();
      }
    }
  }

  private ColumnVector column(Column c, DeviceBody body, Map<Long, ColumnVector> dictionaries) {
    switch (c.kind()) {
      case BOOL:
        return booleans(body, c.rows(), c.data(), c.validity());
      case DICTIONARY:
        return decoded(c, body, dictionaries);
      case LIST:
      case STRUCT:
        return nested(c, body, dictionaries);
      case NULL:
        try (Scalar none = Scalar.fromNull(c.type())) {
          return ColumnVector.fromScalar(none, Math.toIntExact(c.rows()));
        }
      default:
        return leaf(c, body);
    }
  }

  /** Fixed-width and string columns: cuDF columns over slices of the batch, no copy. */
  private ColumnVector leaf(Column c, DeviceBody body) {
    DType type = c.type();
    DeviceMemoryBuffer validity = body.slice(c.validity());
    DeviceMemoryBuffer data = null;
    try {
      Slice d = c.data();
      // cuDF loads values aligned to their width (16 bytes for DECIMAL128); Arrow promises 8.
      boolean misaligned = !type.equals(DType.STRING) && d.length() > 0 && d.offset() % type.getSizeInBytes() != 0;
      data = misaligned ? aligned(body.of(d), d) : body.slice(d);
      DeviceMemoryBuffer offsets = body.slice(c.offsets());
      // The column takes over the slices; each holds a reference on the body.
      return new ColumnVector(type, c.rows(), Optional.of(c.nullCount()), data, validity, offsets);
    } catch (RuntimeException e) {
      closeAll(validity, data);
      throw e;
    }
  }

  /**
   * Lists and structs: a tree of cuDF views over the batch's slices, copied once on the device
   * into a column that owns its memory (a cuDF column cannot own slices of its children).
   */
  private ColumnVector nested(Column c, DeviceBody body, Map<Long, ColumnVector> dictionaries) {
    List<AutoCloseable> scratch = new ArrayList<>();
    try {
      return view(c, body, dictionaries, scratch).copyToColumnVector();
    } finally {
      Collections.reverse(scratch);
      closeAll(scratch.toArray(new AutoCloseable[0]));
    }
  }

  private ColumnView view(Column c, DeviceBody body, Map<Long, ColumnVector> dictionaries,
      List<AutoCloseable> scratch) {
    if (c.kind() != Kind.LIST && c.kind() != Kind.STRUCT) {
      ColumnVector column = column(c, body, dictionaries);
      scratch.add(column);
      return column;
    }
    ColumnView[] children = new ColumnView[c.children().size()];
    for (int i = 0; i < children.length; i++) {
      children[i] = view(c.children().get(i), body, dictionaries, scratch);
    }
    DeviceMemoryBuffer validity = body.slice(c.validity());
    scratch.add(validity);
    DeviceMemoryBuffer offsets = body.slice(c.offsets());
    scratch.add(offsets);
    ColumnView view = new ColumnView(c.type(), c.rows(), Optional.of(c.nullCount()), validity, offsets, children);
    scratch.add(view);
    return view;
  }

  /**
   * A dictionary-encoded column, decoded on the GPU: the dictionary's values gathered by the
   * indices (every non-null index was checked against the dictionary on the host). A null
   * row's index is replaced by one past any dictionary, which the gather turns into a null.
   */
  private ColumnVector decoded(Column c, DeviceBody body, Map<Long, ColumnVector> dictionaries) {
    ColumnVector values = dictionaries.get(c.dictionaryId());
    try (ColumnVector indices = leaf(c, body);
         ColumnVector asInt = indices.castTo(DType.INT32);
         Scalar outside = Scalar.fromInt(Integer.MAX_VALUE);
         ColumnVector map = asInt.replaceNulls(outside);
         Table dictionary = new Table(values);
         Table gathered = dictionary.gather(map, OutOfBoundsPolicy.NULLIFY)) {
      return gathered.getColumn(0).incRefCount();
    }
  }

  /**
   * Spark refuses a decimal with more digits than its type's precision, and the host reader
   * ({@code LoadedBatchCheck}) refuses the file for it; so does this, on the GPU, so that such
   * a value never reaches an operator that would carry it on as if it fitted. Top-level
   * columns only: nested decimals are not checked here.
   */
  private void refuseWideDecimals(Field field, ColumnVector column, String where) {
    if (!(field.getType() instanceof ArrowType.Decimal d) || !column.getType().isDecimalType()) {
      return;
    }
    BigInteger bound = BigInteger.TEN.pow(d.getPrecision());
    try (Scalar high = Scalar.fromDecimal(bound, column.getType());
         Scalar low = Scalar.fromDecimal(bound.negate(), column.getType());
         ColumnVector over = column.greaterOrEqualTo(high);
         ColumnVector under = column.lessOrEqualTo(low);
         ColumnVector wide = over.or(under);
         Scalar any = wide.any()) {
      if (!any.isValid() || !any.getBoolean()) {
        return;
      }
      // Only on the way to an error: find the first such row on the host, to name it.
      try (HostColumnVector flags = wide.copyToHost(); HostColumnVector values = column.copyToHost()) {
        for (long r = 0; r < flags.getRowCount(); r++) {
          if (!flags.isNull(r) && flags.getBoolean(r)) {
            throw new ArrowFormatException(displayName, where + ", column '" + field.getName() + "' row " + r
                + " holds " + values.getBigDecimal(r) + ", more digits than its type " + d + " allows");
          }
        }
      }
    }
  }

  /** A copy of a misaligned slice into its own (256-byte aligned) buffer. */
  private DeviceMemoryBuffer aligned(DeviceMemoryBuffer from, Slice s) {
    DeviceMemoryBuffer copy = device.allocate(s.length() + MASK_SLACK, "aligned Arrow IPC values of " + displayName);
    copy.copyFromDeviceBufferAsync(0, from, s.offset(), s.length(), Cuda.DEFAULT_STREAM);
    Cuda.DEFAULT_STREAM.sync();
    return copy;
  }

  /**
   * Arrow packs booleans into bits, cuDF keeps one byte each. The bits are handed to cuDF as
   * the validity mask of a placeholder column, whose "is not null" is then exactly the values;
   * the real validity is applied after. All of it runs on the GPU.
   */
  private ColumnVector booleans(DeviceBody body, long rows, Slice bits, Slice validity) {
    try (DeviceMemoryBuffer placeholder = device.allocate(rows, "boolean placeholder for " + displayName);
         ColumnVector asMask = new ColumnVector(DType.INT8, rows, Optional.empty(), placeholder.slice(0, rows),
             body.slice(bits), null);
         ColumnVector values = asMask.isNotNull()) {
      if (validity == null) {
        return values.incRefCount();
      }
      // Each placeholder column owns the slices it is given, so every slice has one owner.
      try (DeviceMemoryBuffer again = device.allocate(rows, "boolean placeholder for " + displayName);
           ColumnVector nulls = new ColumnVector(DType.INT8, rows, Optional.empty(), again.slice(0, rows),
               body.slice(validity), null)) {
        return values.mergeAndSetValidity(BinaryOp.BITWISE_AND, nulls);
      }
    }
  }

  private Table emptyTable(List<Field> fields) {
    ColumnVector[] columns = new ColumnVector[fields.size()];
    try {
      for (int i = 0; i < columns.length; i++) {
        columns[i] = ColumnVector.empty(CudfTypeMapping.hostType(fields.get(i), displayName));
      }
      return new Table(columns);
    } finally {
      closeAll(columns);
    }
  }

  private static void closeAll(AutoCloseable... resources) {
    RuntimeException failure = null;
    for (AutoCloseable r : resources) {
      try {
        if (r != null) {
          r.close();
        }
      } catch (Exception e) {
        if (failure == null) {
          failure = e instanceof RuntimeException ? (RuntimeException) e : new IllegalStateException(e);
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
