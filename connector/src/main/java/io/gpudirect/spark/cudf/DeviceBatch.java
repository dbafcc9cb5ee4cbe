package io.gpudirect.spark.cudf;

import ai.rapids.cudf.HostColumnVector;
import ai.rapids.cudf.PinnedMemoryPool;
import ai.rapids.cudf.Table;
import io.gpudirect.GpuDirectException;
import io.gpudirect.gpu.DeviceAllocator;
import io.gpudirect.memory.Charge;
import io.gpudirect.options.ExecutorSettings;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A cuDF table handed to Spark as a {@link ColumnarBatch} of {@link DeviceColumn}s. The table
 * stays on the GPU until a host getter is first called on any column; then the whole batch is
 * copied to the host once (one synchronisation instead of one per column) and every column
 * answers from that copy.
 *
 * <p>Owns the table and its host copy. Each column holds one reference; closing the batch
 * (or its last column) frees both. A reader closes its previous batch before it makes the
 * next, as Spark's own columnar readers do. While it holds the table, the device memory cuDF
 * allocated for it is charged to the reader's {@link DeviceAllocator}
 * ({@link DeviceAllocator#chargeTable}).
 */
public final class DeviceBatch {
  private final Table table;
  private final StructType schema;
  private final Charge charge;
  private HostColumnVector[] host;
  private CudfHostColumn[] hostViews;
  private int references;

  private DeviceBatch(Table table, StructType schema, Charge charge) {
    this.table = table;
    this.schema = schema;
    this.charge = charge;
  }

  /**
   * Takes ownership of {@code table}, whose columns must match {@code schema} one to one
   * ({@link SparkCudfTypes#check}), and charges its device memory to {@code device} under
   * {@code what} (the file it came from) until the batch is closed. On failure, a charge past
   * the allocator's limit included, the table is closed.
   */
  public static ColumnarBatch wrap(Table table, StructType schema, DeviceAllocator device, String what) {
    Charge charge;
    try {
      if (table.getNumberOfColumns() != schema.fields().length) {
        throw new GpuDirectException("cuDF returned " + table.getNumberOfColumns() + " columns for the "
            + schema.fields().length + " of the read schema " + schema.simpleString());
      }
      for (int i = 0; i < schema.fields().length; i++) {
        SparkCudfTypes.check(schema.fields()[i], table.getColumn(i));
      }
      if (table.getRowCount() > Integer.MAX_VALUE) {
        throw new GpuDirectException("A batch of " + table.getRowCount() + " rows is more than Spark takes");
      }
      charge = device.chargeTable(table, what);
    } catch (RuntimeException e) {
      table.close();
      throw e;
    }
    DeviceBatch batch = new DeviceBatch(table, schema, charge);
    ColumnVector[] columns = new ColumnVector[schema.fields().length];
    for (int i = 0; i < columns.length; i++) {
      columns[i] = new DeviceColumn(batch, i, schema.fields()[i].dataType());
    }
    batch.references = columns.length;
    if (columns.length == 0) {
      // Nothing will ever release a column-less batch; its rows are all Spark needs.
      long rows = table.getRowCount();
      table.close();
      charge.close();
      return new ColumnarBatch(columns, (int) rows);
    }
    return new ColumnarBatch(columns, (int) table.getRowCount());
  }

  ai.rapids.cudf.ColumnVector device(int ordinal) {
    synchronized (this) {
      if (references == 0) {
        throw new IllegalStateException("batch already closed");
      }
    }
    return table.getColumn(ordinal);
  }

  /** Whether this JVM has looked at cuDF's pinned pool and made it where wanted. */
  private static boolean pinnedPoolSettled;

  /**
   * Pinned host memory for the copies, set aside once per JVM unless cuDF's pool already
   * exists (the RAPIDS plugin makes its own). Measured on the H200 (docs/benchmarks.md): into
   * freshly malloc'ed pageable memory the device-to-host copy, not cuDF's decode, was what
   * held output=gpu back. A copy that does not fit in the pool falls back to pageable memory.
   */
  private static synchronized void ensurePinnedPool() {
    if (!pinnedPoolSettled) {
      long bytes = ExecutorSettings.hostCopyPinnedPoolBytes();
      if (bytes > 0 && !PinnedMemoryPool.isInitialized()) {
        PinnedMemoryPool.initialize(bytes);
      }
      pinnedPoolSettled = true;
    }
  }

  /** The host view of one column, copying the whole batch to the host on first use. */
  synchronized CudfHostColumn host(int ordinal) {
    if (hostViews == null) {
      if (references == 0) {
        throw new IllegalStateException("batch already closed");
      }
      ensurePinnedPool();
      HostColumnVector[] copies = new HostColumnVector[table.getNumberOfColumns()];
      try {
        for (int i = 0; i < copies.length; i++) {
          copies[i] = table.getColumn(i).copyToHostAsync(ai.rapids.cudf.Cuda.DEFAULT_STREAM);
        }
        ai.rapids.cudf.Cuda.DEFAULT_STREAM.sync();
        CudfHostColumn[] views = new CudfHostColumn[copies.length];
        for (int i = 0; i < copies.length; i++) {
          views[i] = new CudfHostColumn(schema.fields()[i].dataType(), copies[i]);
        }
        host = copies;
        hostViews = views;
      } catch (RuntimeException e) {
        for (HostColumnVector c : copies) {
          if (c != null) {
            c.close();
          }
        }
        throw e;
      }
    }
    return hostViews[ordinal];
  }

  synchronized void release() {
    if (--references == 0) {
      table.close();
      charge.close();
      if (host != null) {
        for (HostColumnVector c : host) {
          c.close();
        }
        host = null;
      }
      hostViews = null;
    }
  }
}
