package io.gpudirect.spark.cudf;

import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * One column of a {@link DeviceBatch}. A GPU consumer takes the cuDF column itself with
 * {@link #cudfColumn()}, which never leaves the device; Spark's getters work too, and the
 * first of them copies the batch to the host once.
 */
public final class DeviceColumn extends ColumnVector {
  private final DeviceBatch batch;
  private final int ordinal;
  private CudfHostColumn host;
  private boolean closed;

  DeviceColumn(DeviceBatch batch, int ordinal, DataType type) {
    super(type);
    this.batch = batch;
    this.ordinal = ordinal;
  }

  /** The column on the GPU, owned by the batch: valid until the batch is closed. */
  public ai.rapids.cudf.ColumnVector cudfColumn() {
    return batch.device(ordinal);
  }

  private CudfHostColumn host() {
    CudfHostColumn h = host;
    if (h == null) {
      h = batch.host(ordinal);
      host = h;
    }
    return h;
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      host = null;
      batch.release();
    }
  }

  @Override
  public boolean hasNull() {
    return cudfColumn().getNullCount() > 0;
  }

  @Override
  public int numNulls() {
    return (int) cudfColumn().getNullCount();
  }

  @Override
  public boolean isNullAt(int rowId) {
    return host().isNullAt(rowId);
  }

  @Override
  public boolean getBoolean(int rowId) {
    return host().getBoolean(rowId);
  }

  @Override
  public byte getByte(int rowId) {
    return host().getByte(rowId);
  }

  @Override
  public short getShort(int rowId) {
    return host().getShort(rowId);
  }

  @Override
  public int getInt(int rowId) {
    return host().getInt(rowId);
  }

  @Override
  public long getLong(int rowId) {
    return host().getLong(rowId);
  }

  @Override
  public float getFloat(int rowId) {
    return host().getFloat(rowId);
  }

  @Override
  public double getDouble(int rowId) {
    return host().getDouble(rowId);
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    return host().getArray(rowId);
  }

  @Override
  public ColumnarMap getMap(int rowId) {
    return host().getMap(rowId);
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    return host().getDecimal(rowId, precision, scale);
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    return host().getUTF8String(rowId);
  }

  @Override
  public byte[] getBinary(int rowId) {
    return host().getBinary(rowId);
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    return host().getChild(ordinal);
  }
}
