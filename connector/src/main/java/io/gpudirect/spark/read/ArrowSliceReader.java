package io.gpudirect.spark.read;

import io.gpudirect.arrow.ArrowMemory;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.spark.arrow.ArrowIpcFile;
import io.gpudirect.spark.plan.ArrowPlanner;
import io.gpudirect.spark.plan.ArrowSlice;
import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** The record batches of one Arrow slice as Spark batches backed by Arrow memory. */
public final class ArrowSliceReader implements SliceReader<ColumnarBatch> {
  private final BufferAllocator allocator;
  private final ArrowIpcFile ipc;
  private final PartitionReader<ColumnarBatch> batches;

  public ArrowSliceReader(ArrowSlice slice, RemoteStore store, StructType readSchema) {
    this.allocator = ArrowMemory.child("read " + slice.file().uri());
    ArrowIpcFile opened = null;
    try {
      opened = ArrowPlanner.open(slice.file(), store, allocator);
      int to = slice.batchCount() < 0 ? Integer.MAX_VALUE : slice.firstBatch() + slice.batchCount();
      this.batches = opened.readBatches(slice.firstBatch(), to, readSchema);
      this.ipc = opened;
    } catch (RuntimeException e) {
      if (opened != null) {
        opened.close();
      }
      allocator.close();
      throw e;
    }
  }

  @Override
  public boolean next() throws IOException {
    return batches.next();
  }

  @Override
  public ColumnarBatch get() {
    return batches.get();
  }

  @Override
  public void close() throws IOException {
    try (allocator; ipc; batches) {
      // Closed in reverse order: batches, then the file, then the allocator that must be empty.
    }
  }
}
