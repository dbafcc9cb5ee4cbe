package io.gpudirect.spark.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gpudirect.dataset.DataFile;
import io.gpudirect.dataset.DataFormat;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.protocol.FileVersion;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PartitionPackerTest {
  private static final long MIB = 1 << 20;
  /** Spark's default spark.sql.files.openCostInBytes. */
  private static final long OPEN_COST = 4 * MIB;

  private record Slice(DataFile file, long bytes) implements FileSlice {}

  private static Slice slice(String server, String path, long bytes) {
    return new Slice(new DataFile(GpuDirectUri.parse("gpudirect://" + server + "/" + path), 300 * MIB,
        FileVersion.ANY, DataFormat.PARQUET), bytes);
  }

  /**
   * Eight files as Spark writes them (two 128 MiB row groups and a 2.4 MiB tail each): the
   * tails share one partition, as in Spark's own scan of the same files (17 partitions), instead
   * of one each (24).
   */
  @Test
  void smallSlicesArePackedTogetherAfterTheLargeOnes() {
    List<FileSlice> slices = new ArrayList<>();
    for (int f = 0; f < 8; f++) {
      slices.add(slice("a:7337", "f" + f, 128 * MIB));
      slices.add(slice("a:7337", "f" + f, 128 * MIB));
      slices.add(slice("a:7337", "f" + f, 5 * MIB / 2));
    }
    List<GpuDirectPartition> partitions = PartitionPacker.pack(slices, 128 * MIB, OPEN_COST);
    assertEquals(17, partitions.size());
    assertEquals(8, partitions.get(16).slices().size(), "the eight tails together");
    assertEquals(24, partitions.stream().mapToInt(p -> p.slices().size()).sum(), "every slice once");
  }

  @Test
  void slicesOfDifferentServersNeverShareAPartition() {
    List<FileSlice> slices = List.of(slice("a:7337", "x", MIB), slice("b:7337", "y", MIB),
        slice("a:7337", "z", MIB));
    List<GpuDirectPartition> partitions = PartitionPacker.pack(slices, 128 * MIB, OPEN_COST);
    assertEquals(2, partitions.size());
    assertEquals("a", partitions.get(0).host());
    assertEquals(2, partitions.get(0).slices().size());
    assertEquals("b", partitions.get(1).host());
  }

  @Test
  void theTargetIsSparksSplitSize() {
    List<DataFile> eight = new ArrayList<>();
    for (int f = 0; f < 8; f++) {
      eight.add(new DataFile(GpuDirectUri.parse("gpudirect://a:7337/f" + f), 11 * MIB + MIB / 2, FileVersion.ANY, DataFormat.PARQUET));
    }
    // 8 x (11.5 MiB + 4 MiB open cost) over 2 cores: 62 MiB a partition, not 128.
    assertEquals(62 * MIB, PartitionPacker.target(128 * MIB, OPEN_COST, eight, 2));
    assertEquals(124 * MIB, PartitionPacker.target(128 * MIB, OPEN_COST, eight, 1));
    // A large scan: maxPartitionBytes; a tiny one: the open cost.
    DataFile big = new DataFile(GpuDirectUri.parse("gpudirect://a:7337/big"), 1L << 30, FileVersion.ANY, DataFormat.PARQUET);
    assertEquals(128 * MIB, PartitionPacker.target(128 * MIB, OPEN_COST, List.of(big), 2));
    assertEquals(4 * MIB, PartitionPacker.target(128 * MIB, OPEN_COST, List.of(eight.get(0)), 64));
  }
}
