package io.gpudirect.bench;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;

/**
 * The Arrow data both Flight and gpudirect serve: an IPC file of 64 Ki-row batches with a long,
 * a double and a short string per row (about 25 bytes of buffers per row).
 */
final class ArrowData {
  static final int BATCH_ROWS = 1 << 16;
  private static final String[] WORDS = {"bike", "bus", "car", "ferry", "scooter", "taxi", "train", "tram"};

  private ArrowData() {}

  /** Writes about {@code targetBytes} of Arrow IPC file to {@code file}; returns its rows. */
  static long write(Path file, long targetBytes, BufferAllocator allocator) throws IOException {
    long rows = Math.max(BATCH_ROWS, targetBytes / 25 / BATCH_ROWS * BATCH_ROWS);
    Random random = new Random(7);
    byte[][] words = new byte[WORDS.length][];
    for (int i = 0; i < words.length; i++) {
      words[i] = WORDS[i].getBytes(StandardCharsets.UTF_8);
    }
    try (BigIntVector id = new BigIntVector("id", allocator);
         Float8Vector amount = new Float8Vector("amount", allocator);
         VarCharVector category = new VarCharVector("category", allocator);
         VectorSchemaRoot root = VectorSchemaRoot.of(id, amount, category);
         FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE,
             StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
         ArrowFileWriter writer = new ArrowFileWriter(root, null, out)) {
      writer.start();
      for (long done = 0; done < rows; done += BATCH_ROWS) {
        int n = (int) Math.min(BATCH_ROWS, rows - done);
        id.allocateNew(n);
        amount.allocateNew(n);
        category.allocateNew(n * 6L, n);
        for (int i = 0; i < n; i++) {
          id.set(i, done + i);
          amount.set(i, random.nextDouble() * 100);
          category.setSafe(i, words[(int) ((done + i) % words.length)]);
        }
        root.setRowCount(n);
        writer.writeBatch();
      }
      writer.end();
    }
    return rows;
  }
}
