package io.gpudirect.spark.cudf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostColumnVector;
import ai.rapids.cudf.HostColumnVectorCore;
import ai.rapids.cudf.Rmm;
import ai.rapids.cudf.RmmAllocationMode;
import io.gpudirect.gpu.GpuTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Binary that cuDF's Parquet reader gives as STRING becomes the LIST&lt;UINT8&gt; the RAPIDS
 * plugin holds binary in, byte for byte, with its nulls and empty values, bytes that are not
 * UTF-8 included.
 */
@GpuTest
class ByteListsGpuTest {
  @BeforeAll
  static void initializeRmm() {
    if (!Rmm.isInitialized()) {
      Rmm.initialize(RmmAllocationMode.CUDA_DEFAULT, null, 0);
    }
  }

  @Test
  void binaryHeldAsStringsBecomesListsOfTheSameBytes() {
    check(new byte[][] {{1, 2, (byte) 0xff}, null, {}, {(byte) 0xc3}, {0, 0}, null});
    check(new byte[][] {{}, {}, null}); // no byte at all: the strings column has no data buffer
    check(new byte[0][]);
  }

  private static void check(byte[][] values) {
    try (ColumnVector strings = strings(values);
         ColumnVector lists = SparkCudfTypes.asByteLists(strings);
         HostColumnVector host = lists.copyToHost()) {
      assertEquals(DType.LIST, lists.getType());
      assertEquals(values.length, host.getRowCount());
      HostColumnVectorCore bytes = host.getChildColumnView(0);
      assertEquals(DType.UINT8, bytes.getType());
      for (int r = 0; r < values.length; r++) {
        if (values[r] == null) {
          assertTrue(host.isNull(r), "row " + r + " is null");
          continue;
        }
        long start = host.getStartListOffset(r);
        byte[] actual = new byte[(int) (host.getEndListOffset(r) - start)];
        for (int i = 0; i < actual.length; i++) {
          actual[i] = bytes.getByte(start + i);
        }
        assertArrayEquals(values[r], actual, "row " + r);
      }
    }
  }

  private static ColumnVector strings(byte[][] values) {
    try (HostColumnVector.ColumnBuilder b = new HostColumnVector.ColumnBuilder(
        new HostColumnVector.BasicType(true, DType.STRING), values.length)) {
      for (byte[] v : values) {
        if (v == null) {
          b.appendNull();
        } else {
          b.appendUTF8String(v);
        }
      }
      return b.buildAndPutOnDevice();
    }
  }
}
