package io.gpudirect.spark;

import java.io.Serializable;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * How a scan hands its batches to a GPU SQL engine (the RAPIDS Accelerator) in the engine's
 * own form, so that its operators take them as they take the batches of its own scans. Made
 * on the driver, used on executors on the task's thread.
 */
public interface DeviceHandoff extends Serializable {
  /**
   * The engine's admission: called before the scan decodes or builds anything of its next batch
   * on the GPU. Column chunks fetched ahead (a bounded share of the GPU's memory) may already be
   * there: fetching is not what the engine admits tasks for.
   */
  void beforeGpuWork();

  /**
   * The engine's batch over these cuDF columns. The columns stay the caller's: the batch
   * holds references of its own, and whoever consumes the batch closes it.
   */
  ColumnarBatch fromDevice(ai.rapids.cudf.ColumnVector[] columns, int rows, StructType schema);

  /**
   * A host batch copied to the device in the engine's form, for slices the GPU decoder
   * refuses. The host batch stays the caller's; the result is the consumer's to close.
   */
  ColumnarBatch fromHost(ColumnarBatch host, StructType schema);

  /** Bytes of device memory the engine wants a batch to hold at most. */
  long targetBatchBytes();
}
