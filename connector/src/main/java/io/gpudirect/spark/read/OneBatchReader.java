package io.gpudirect.spark.read;

import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A slice read as a single batch, as the GPU readers make them: the subclass decodes the
 * whole slice in its constructor and hands the batch over with {@link #produced}; this
 * reader then returns it once and closes it with itself.
 */
abstract class OneBatchReader implements SliceReader<ColumnarBatch> {
  private ColumnarBatch batch;
  private boolean consumed;

  /** Takes ownership of {@code b}. */
  protected final void produced(ColumnarBatch b) {
    this.batch = b;
  }

  @Override
  public final boolean next() {
    if (consumed) {
      return false;
    }
    consumed = true;
    return true;
  }

  @Override
  public final ColumnarBatch get() {
    return batch;
  }

  @Override
  public final void close() {
    if (batch != null) {
      batch.close();
      batch = null;
    }
  }
}
