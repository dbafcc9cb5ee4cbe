package io.gpudirect.spark.plan;

import io.gpudirect.dataset.DataFile;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;

/**
 * Slices of files on one server, read by one task; the task prefers to run on that server's
 * host. {@code partitionValues} holds, by file URI, the values that each of its files'
 * directories give the partition columns; empty where the scan has none.
 */
public record GpuDirectPartition(List<FileSlice> slices, String host, Map<String, InternalRow> partitionValues)
    implements InputPartition {
  public GpuDirectPartition(List<FileSlice> slices, String host) {
    this(slices, host, Map.of());
  }

  /** The same slices, with the partition values of their files. */
  public GpuDirectPartition withValuesOf(DirectoryPartitioning partitioning) {
    Map<String, InternalRow> values = new java.util.HashMap<>();
    for (FileSlice s : slices) {
      values.putIfAbsent(s.file().uri().toString(), partitioning.values(s.file()));
    }
    return new GpuDirectPartition(slices, host, values);
  }

  public InternalRow values(DataFile file) {
    return partitionValues.get(file.uri().toString());
  }

  @Override
  public String[] preferredLocations() {
    return new String[] {host};
  }
}
