package io.gpudirect.spark.plan;

import java.util.List;
import org.apache.spark.sql.connector.read.InputPartition;

/** Slices of files on one server, read by one task; the task prefers to run on that server's host. */
public record GpuDirectPartition(List<FileSlice> slices, String host) implements InputPartition {
  @Override
  public String[] preferredLocations() {
    return new String[] {host};
  }
}
