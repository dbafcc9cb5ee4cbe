package io.gpudirect.demo;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;

/** Writes the demo's Arrow IPC file: the same columns as the Parquet dataset, in record batches. */
final class SampleArrowWriter {
  private static final int BATCH_ROWS = 1 << 16;
  private static final String[] CATEGORIES = {"bike", "bus", "car", "ferry", "scooter", "taxi", "train", "tram"};

  private SampleArrowWriter() {}

  static void write(Path file, long rows) throws IOException {
    Random random = new Random(7);
    byte[][] names = new byte[CATEGORIES.length][];
    for (int i = 0; i < names.length; i++) {
      names[i] = CATEGORIES[i].getBytes(StandardCharsets.UTF_8);
    }
    try (BufferAllocator allocator = new RootAllocator();
         BigIntVector id = new BigIntVector("trip_id", allocator);
         VarCharVector category = new VarCharVector("category", allocator);
         Float8Vector amount = new Float8Vector("amount", allocator);
         Float4Vector distance = new Float4Vector("distance", allocator);
         TimeStampMicroTZVector started = new TimeStampMicroTZVector("started_at", allocator, "UTC");
         VectorSchemaRoot root = new VectorSchemaRoot(List.of(id, category, amount, distance, started));
         FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
             StandardOpenOption.TRUNCATE_EXISTING);
         ArrowFileWriter writer = new ArrowFileWriter(root, null, out)) {
      writer.start();
      for (long base = 0; base < rows; base += BATCH_ROWS) {
        int n = (int) Math.min(BATCH_ROWS, rows - base);
        root.allocateNew();
        for (int i = 0; i < n; i++) {
          long row = base + i;
          id.setSafe(i, row);
          category.setSafe(i, names[(int) (row % names.length)]);
          amount.setSafe(i, random.nextDouble() * 100);
          distance.setSafe(i, random.nextFloat() * 40);
          started.setSafe(i, (1_700_000_000L + row) * 1_000_000L);
        }
        root.setRowCount(n);
        writer.writeBatch();
      }
      writer.end();
    }
  }
}
