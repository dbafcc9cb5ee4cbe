package io.gpudirect.spark.plan;

import io.gpudirect.arrow.ArrowMemory;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.dataset.DataFile;
import io.gpudirect.dataset.DataFormat;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.remote.RemoteFileChannel;
import io.gpudirect.remote.RemoteStores;
import io.gpudirect.spark.arrow.ArrowIpcFile;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.spark.sql.types.StructType;

/** Driver-side Arrow IPC work: schema, and slicing files into runs of record batches. */
public final class ArrowPlanner {
  private ArrowPlanner() {}

  public static ArrowIpcFile open(DataFile file, RemoteStore store, BufferAllocator allocator) {
    RemoteFileChannel channel = new RemoteFileChannel(store, file.uri().path(), file.version(), file.length());
    return ArrowIpcFile.open(channel, file.uri().toString(), file.format() == DataFormat.ARROW_STREAM, allocator);
  }

  public static StructType schema(DataFile file, ResolvedOptions options) {
    try (BufferAllocator allocator = ArrowMemory.child("schema " + file.uri());
         ArrowIpcFile ipc = open(file, RemoteStores.get(file.uri(), options), allocator)) {
      return ipc.sparkSchema();
    }
  }

  public static List<FileSlice> slice(DataFile file, ResolvedOptions options, long targetBytes) {
    if (file.format() == DataFormat.ARROW_STREAM) {
      return List.of(new ArrowSlice(file, 0, -1, file.length()));
    }
    List<FileSlice> slices = new ArrayList<>();
    try (BufferAllocator allocator = ArrowMemory.child("plan " + file.uri());
         ArrowIpcFile ipc = open(file, RemoteStores.get(file.uri(), options), allocator)) {
      int n = ipc.recordBatchCount();
      int first = 0;
      long bytes = 0;
      for (int i = 0; i < n; i++) {
        long b = ipc.recordBatchBytes(i);
        if (i > first && bytes + b > targetBytes) {
          slices.add(new ArrowSlice(file, first, i - first, bytes));
          first = i;
          bytes = 0;
        }
        bytes += b;
      }
      if (n > first) {
        slices.add(new ArrowSlice(file, first, n - first, bytes));
      }
    }
    return slices;
  }
}
