package io.gpudirect.spark.plan;

import io.gpudirect.dataset.DataFile;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Packs slices into partitions toward a target size, like Spark's file sources: slices of one
 * server go together (so the partition has one preferred host), largest first ("next fit
 * decreasing", as Spark's {@code FilePartition} does), and each slice also costs a fixed open
 * cost (Spark's {@code spark.sql.files.openCostInBytes}) so that many tiny files do not become
 * one huge task. Largest first matters for
 * Parquet: files written by Spark end in a small row group, and taken in file order each of
 * them became a task of its own (24 tasks for 8 files of two 128 MiB row groups and a 2 MiB
 * one, where Spark's own scan makes 17); taken last, they share one.
 */
public final class PartitionPacker {
  private PartitionPacker() {}

  /**
   * The partition size to aim for, by Spark's own rule ({@code FilePartition.maxSplitBytes}):
   * at most {@code maxPartitionBytes}, and at most an even share of the scan per partition of
   * {@code minPartitions} (the cores, by default), so that a small scan still keeps every core
   * busy; never under the open cost. A 92 MiB dataset on 2 cores was one task without it,
   * where Spark's scan of the same files made two.
   */
  public static long target(long maxPartitionBytes, long openCost, List<DataFile> files, int minPartitions) {
    long total = 0;
    for (DataFile f : files) {
      total += f.length() + openCost;
    }
    return Math.min(maxPartitionBytes, Math.max(openCost, total / Math.max(1, minPartitions)));
  }

  public static List<GpuDirectPartition> pack(List<FileSlice> slices, long targetBytes, long openCost) {
    Map<String, List<FileSlice>> byServer = new LinkedHashMap<>();
    for (FileSlice s : slices) {
      byServer.computeIfAbsent(s.file().uri().authority(), k -> new ArrayList<>()).add(s);
    }
    List<GpuDirectPartition> partitions = new ArrayList<>();
    for (List<FileSlice> group : byServer.values()) {
      String host = group.get(0).file().uri().host();
      group.sort(Comparator.comparingLong(FileSlice::bytes).reversed());
      List<FileSlice> current = new ArrayList<>();
      long size = 0;
      for (FileSlice s : group) {
        long cost = s.bytes() + openCost;
        if (!current.isEmpty() && size + cost > targetBytes) {
          partitions.add(new GpuDirectPartition(List.copyOf(current), host));
          current.clear();
          size = 0;
        }
        current.add(s);
        size += cost;
      }
      if (!current.isEmpty()) {
        partitions.add(new GpuDirectPartition(List.copyOf(current), host));
      }
    }
    return partitions;
  }
}
