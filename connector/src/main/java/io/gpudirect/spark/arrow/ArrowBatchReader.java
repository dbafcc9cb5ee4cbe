package io.gpudirect.spark.arrow;

import io.gpudirect.arrow.BatchSource;
import io.gpudirect.arrow.Failures;
import java.io.IOException;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The record batches of one partition of an {@link ArrowIpcFile} as Spark
 * {@link ColumnarBatch}es, one at a time. A batch is valid until the next {@link #next()}
 * or {@link #close()}: both release its Arrow buffers before anything else is read. The
 * caller must not close the batches it gets; this reader owns them.
 */
public final class ArrowBatchReader implements PartitionReader<ColumnarBatch> {
  private final BatchSource source;
  private final StructType requiredSchema;
  private final int[] columns;
  private final String displayName;
  private ColumnarBatch current;
  private boolean closed;

  ArrowBatchReader(BatchSource source, StructType requiredSchema, int[] columns, String displayName) {
    this.source = source;
    this.requiredSchema = requiredSchema;
    this.columns = columns;
    this.displayName = displayName;
  }

  @Override
  public boolean next() {
    if (closed) {
      return false;
    }
    closeCurrent();
    try {
      if (!source.loadNext()) {
        return false;
      }
      current = wrap(source.root());
      return true;
    } catch (IOException | RuntimeException | StackOverflowError e) {
      throw Failures.named(displayName, "cannot read " + source.describe(), e);
    }
  }

  @Override
  public ColumnarBatch get() {
    if (current == null) {
      throw new IllegalStateException("no current batch of " + displayName + "; call next() first");
    }
    return current;
  }

  /** Closes the current batch; the {@link ArrowIpcFile} releases the rest. */
  @Override
  public void close() {
    closeCurrent();
    closed = true;
  }

  boolean isClosed() {
    return closed;
  }

  private ColumnarBatch wrap(VectorSchemaRoot root) {
    ColumnVector[] vectors = new ColumnVector[columns.length];
    for (int i = 0; i < columns.length; i++) {
      String name = requiredSchema.fields()[i].name();
      vectors[i] = SparkColumns.of(root.getVector(columns[i]), requiredSchema.fields()[i].dataType(),
          source.dictionaries(), "column '" + name + "' of " + displayName);
    }
    return new ColumnarBatch(vectors, root.getRowCount());
  }

  private void closeCurrent() {
    if (current != null) {
      // Not current.close(): Spark's ArrowColumnVector.close() closes a struct vector,
      // which drops its children from the reader's root for good. Clearing releases the
      // buffers and keeps the root's shape for the next batch.
      current = null;
      try {
        source.root().clear();
      } catch (IOException e) {
        throw Failures.named(displayName, "cannot release a batch", e);
      }
    }
  }
}
