package io.gpudirect.spark.arrow;

import org.apache.arrow.vector.ValueVector;
import org.apache.spark.sql.vectorized.ArrowColumnVector;

/**
 * Spark's own Arrow column, over a vector the batch reader owns. Spark closes columns it is
 * done with (whole-stage code calls {@code closeIfFreeable()} before asking for the next
 * batch), and closing a struct vector drops its children from the reader's reused root for
 * good. So closing here does nothing; the reader releases the buffers when it moves on.
 */
final class ReaderOwnedArrowColumn extends ArrowColumnVector {
  ReaderOwnedArrowColumn(ValueVector vector) {
    super(vector);
  }

  @Override
  public void close() {
    // The reader owns the vector: see the class comment.
  }
}
