package io.gpudirect.spark;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.ContiguousTable;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.Table;
import io.gpudirect.spark.cudf.DeviceColumn;
import io.gpudirect.spark.cudf.SparkCudfTypes;
import java.io.IOException;
import java.util.ArrayDeque;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A partition's batches in a GPU engine's form ({@link DeviceHandoff}): device batches are
 * wrapped, never copied to the host, and cut by rows where they hold more than the engine's
 * target; batches of slices read on the host are copied over once. Each batch it returns is
 * the consumer's to close, as the batches of the engine's own scans are.
 */
final class HandoffReader implements PartitionReader<ColumnarBatch> {
  private final PartitionReader<ColumnarBatch> slices;
  private final DeviceHandoff handoff;
  private final StructType schema;
  /** Pieces of a batch cut to the target, not yet returned: still this reader's. */
  private final ArrayDeque<ColumnarBatch> ready = new ArrayDeque<>();
  private ColumnarBatch current;

  HandoffReader(PartitionReader<ColumnarBatch> slices, DeviceHandoff handoff, StructType schema) {
    this.slices = slices;
    this.handoff = handoff;
    this.schema = schema;
  }

  @Override
  public boolean next() throws IOException {
    current = null;
    if (ready.isEmpty()) {
      // A slice decoded on the GPU is admitted by its reader, once its bytes are fetched and
      // before its decode; this admits the others before their batches are copied over.
      if (!slices.next()) {
        return false;
      }
      handoff.beforeGpuWork();
      handOver(slices.get());
    }
    current = ready.poll();
    return true;
  }

  @Override
  public ColumnarBatch get() {
    return current;
  }

  private void handOver(ColumnarBatch batch) {
    int rows = batch.numRows();
    if (batch.numCols() == 0) {
      ready.add(new ColumnarBatch(new org.apache.spark.sql.vectorized.ColumnVector[0], rows));
      return;
    }
    if (!(batch.column(0) instanceof DeviceColumn)) {
      ready.add(handoff.fromHost(batch, schema));
      return;
    }
    ColumnVector[] columns = new ColumnVector[batch.numCols()];
    long bytes = 0;
    for (int i = 0; i < columns.length; i++) {
      columns[i] = ((DeviceColumn) batch.column(i)).cudfColumn();
      bytes += columns[i].getDeviceMemorySize();
    }
    ColumnVector[] laidOut = engineLayout(columns);
    try {
      cut(laidOut, rows, bytes);
    } finally {
      for (int i = 0; i < laidOut.length; i++) {
        if (laidOut[i] != columns[i]) {
          laidOut[i].close();
        }
      }
    }
  }

  /**
   * The columns as the engine holds them: decimals in the narrowest width their precision fits
   * (cuDF's Parquet reader keeps the width the file stored), binary as LIST&lt;UINT8&gt; (where
   * cuDF's Parquet reader gave STRING). Columns already so are returned as they are; the others
   * are new columns, the caller's to close.
   */
  private ColumnVector[] engineLayout(ColumnVector[] columns) {
    ColumnVector[] out = columns.clone();
    try {
      for (int i = 0; i < out.length; i++) {
        DataType type = schema.fields()[i].dataType();
        if (type instanceof DecimalType d) {
          DType want = SparkCudfTypes.decimalType(d);
          if (!columns[i].getType().equals(want)) {
            out[i] = columns[i].castTo(want);
          }
        } else if (type instanceof BinaryType && columns[i].getType().equals(DType.STRING)) {
          out[i] = SparkCudfTypes.asByteLists(columns[i]);
        }
      }
      return out;
    } catch (RuntimeException e) {
      for (int i = 0; i < out.length; i++) {
        if (out[i] != null && out[i] != columns[i]) {
          out[i].close();
        }
      }
      throw e;
    }
  }

  private void cut(ColumnVector[] columns, int rows, long bytes) {
    long pieces = Math.min(rows, (bytes + handoff.targetBatchBytes() - 1) / handoff.targetBatchBytes());
    if (pieces <= 1) {
      ready.add(handoff.fromDevice(columns, rows, schema));
      return;
    }
    // More than the engine's target: cut by rows, each piece one contiguous device buffer.
    int[] at = new int[(int) pieces - 1];
    for (int i = 0; i < at.length; i++) {
      at[i] = (int) ((long) rows * (i + 1) / pieces);
    }
    ContiguousTable[] parts;
    try (Table whole = new Table(columns)) {
      parts = whole.contiguousSplit(at);
    }
    try {
      for (ContiguousTable part : parts) {
        Table t = part.getTable();
        ColumnVector[] cs = new ColumnVector[t.getNumberOfColumns()];
        for (int i = 0; i < cs.length; i++) {
          cs[i] = t.getColumn(i);
        }
        ready.add(handoff.fromDevice(cs, (int) t.getRowCount(), schema));
      }
    } finally {
      for (ContiguousTable part : parts) {
        part.close();
      }
    }
  }

  @Override
  public CustomTaskMetric[] currentMetricsValues() {
    return slices.currentMetricsValues();
  }

  @Override
  public void close() throws IOException {
    current = null;
    while (!ready.isEmpty()) {
      ready.poll().close();
    }
    slices.close();
  }
}
