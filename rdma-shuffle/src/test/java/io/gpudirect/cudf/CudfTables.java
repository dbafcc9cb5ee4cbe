package io.gpudirect.cudf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.ArrowIPCWriterOptions;
import ai.rapids.cudf.HostBufferConsumer;
import ai.rapids.cudf.HostMemoryBuffer;
import ai.rapids.cudf.Table;
import ai.rapids.cudf.TableWriter;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;

/**
 * Compares two cuDF tables value by value: each is exported as Arrow IPC by cuDF and read back
 * by Arrow Java, whose equality ignores padding and the bytes under nulls.
 */
final class CudfTables {
  private CudfTables() {}

  static void assertSameValues(Table expected, Table actual, String what) throws Exception {
    assertEquals(expected.getNumberOfColumns(), actual.getNumberOfColumns(), "columns of " + what);
    assertEquals(expected.getRowCount(), actual.getRowCount(), "rows of " + what);
    byte[] e = toArrowIpc(expected);
    byte[] a = toArrowIpc(actual);
    try (BufferAllocator allocator = new RootAllocator();
         ArrowStreamReader er = new ArrowStreamReader(new ByteArrayInputStream(e), allocator);
         ArrowStreamReader ar = new ArrowStreamReader(new ByteArrayInputStream(a), allocator)) {
      int batch = 0;
      while (true) {
        boolean more = er.loadNextBatch();
        assertEquals(more, ar.loadNextBatch(), "batch count of " + what);
        if (!more) {
          break;
        }
        VectorSchemaRoot x = er.getVectorSchemaRoot();
        VectorSchemaRoot y = ar.getVectorSchemaRoot();
        assertTrue(x.equals(y), "batch " + batch + " of " + what + " differs:\nexpected " + x.contentToTSVString()
            + "\nactual " + y.contentToTSVString());
        batch++;
      }
    }
  }

  /** Struct fields take names; a list's element does not, but the fields below it do. */
  private static void name(ai.rapids.cudf.ColumnView column, String name, java.util.List<String> out) {
    if (name != null) {
      out.add(name);
    }
    boolean list = column.getType().equals(ai.rapids.cudf.DType.LIST);
    for (int i = 0; i < column.getNumChildren(); i++) {
      try (ai.rapids.cudf.ColumnView child = column.getChildColumnView(i)) {
        name(child, list ? null : (name == null ? "f" : name) + "_" + i, out);
      }
    }
  }

  private static byte[] toArrowIpc(Table t) {
    // cuDF takes one flat, depth-first list of names for columns and their children.
    java.util.List<String> flat = new java.util.ArrayList<>();
    for (int i = 0; i < t.getNumberOfColumns(); i++) {
      name(t.getColumn(i), "c" + i, flat);
    }
    String[] names = flat.toArray(new String[0]);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    HostBufferConsumer consumer = (HostMemoryBuffer buffer, long len) -> {
      try (buffer) {
        byte[] bytes = new byte[(int) len];
        buffer.getBytes(bytes, 0, 0, len);
        out.write(bytes, 0, bytes.length);
      }
    };
    try (TableWriter w = Table.writeArrowIPCChunked(
        ArrowIPCWriterOptions.builder().withColumnNames(names).build(), consumer)) {
      w.write(t);
    }
    return out.toByteArray();
  }
}
