package io.gpudirect.spark.cudf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.Rmm;
import ai.rapids.cudf.RmmAllocationMode;
import ai.rapids.cudf.Table;
import io.gpudirect.gpu.DeviceAllocator;
import io.gpudirect.gpu.GpuTest;
import io.gpudirect.memory.AllocationLimitException;
import io.gpudirect.memory.BufferAllocator;
import java.util.Optional;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A batch charges the device memory cuDF made for its table (a decoded Parquet slice, a
 * converted Arrow column) while it holds it, refuses a table past its allocator's limit and
 * frees it, and does not charge twice what lies in a buffer the device allocator made.
 */
@GpuTest
class DeviceBatchGpuTest {
  private static final StructType INTS = new StructType().add("x", DataTypes.IntegerType);
  private static final int ROWS = 1000;

  @BeforeAll
  static void initializeRmm() {
    if (!Rmm.isInitialized()) {
      Rmm.initialize(RmmAllocationMode.CUDA_DEFAULT, null, 0);
    }
  }

  private static Table ints() {
    int[] values = new int[ROWS];
    for (int i = 0; i < ROWS; i++) {
      values[i] = i;
    }
    try (ColumnVector c = ColumnVector.fromInts(values)) {
      return new Table(c);
    }
  }

  @Test
  void aTableCudfMadeIsChargedWhileTheBatchHoldsIt() {
    try (BufferAllocator accounts = BufferAllocator.root().newChildAllocator("batch-test", 1 << 20)) {
      DeviceAllocator device = new DeviceAllocator(accounts);
      ColumnarBatch batch = DeviceBatch.wrap(ints(), INTS, device, "decoded test slice");
      assertTrue(accounts.outstandingBytes() >= 4L * ROWS, "charged: " + accounts);
      batch.close();
      assertEquals(0, accounts.outstandingBytes());
    }
  }

  @Test
  void aTablePastTheLimitIsRefusedNamingItAndFreed() {
    long rmmBefore = Rmm.getTotalBytesAllocated();
    try (BufferAllocator accounts = BufferAllocator.root().newChildAllocator("small-device", 1000)) {
      DeviceAllocator device = new DeviceAllocator(accounts);
      AllocationLimitException e = assertThrows(AllocationLimitException.class,
          () -> DeviceBatch.wrap(ints(), INTS, device, "decoded Parquet slice of gpudirect://h:1/t.parquet"));
      assertTrue(e.getMessage().contains("root/small-device")
          && e.getMessage().contains("gpudirect://h:1/t.parquet"), e.getMessage());
      assertEquals(0, accounts.outstandingBytes());
    }
    assertEquals(rmmBefore, Rmm.getTotalBytesAllocated(), "the refused table was freed");
  }

  /** A zero-copy column over a body the allocator made is charged once, through the body. */
  @Test
  void columnsOverTheAllocatorsOwnBuffersAreNotChargedTwice() {
    try (BufferAllocator accounts = BufferAllocator.root().newChildAllocator("zero-copy", 1 << 20)) {
      DeviceAllocator device = new DeviceAllocator(accounts);
      long bodyBytes = 4L * ROWS + 64;
      ColumnarBatch batch;
      try (DeviceMemoryBuffer body = device.allocate(bodyBytes, "test body")) {
        ColumnVector column = new ColumnVector(DType.INT32, ROWS, Optional.of(0L), body.slice(0, 4L * ROWS), null, null);
        Table table;
        try (column) {
          table = new Table(column);
        }
        batch = DeviceBatch.wrap(table, INTS, device, "zero-copy test slice");
      }
      assertEquals(bodyBytes, accounts.outstandingBytes(), "the body alone, held by the column's slice");
      batch.close();
      assertEquals(0, accounts.outstandingBytes());
    }
  }
}
