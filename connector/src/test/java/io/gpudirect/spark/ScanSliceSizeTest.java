package io.gpudirect.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.server.BlockServer;
import io.gpudirect.spark.plan.GpuDirectPartition;
import io.gpudirect.spark.plan.ParquetSlice;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.collection.JavaConverters;

/**
 * How large a scan's slices are. The scan follows Spark's {@code spark.sql.files.maxPartitionBytes}
 * unless its own option says otherwise, as users who tune Spark's file sources (the RAPIDS
 * Accelerator's tuning guide raises it) expect. And a small scan on many cores: the host reader's slices are cut at the per-core share, so that
 * every core decodes a part; a scan whose batches go to the GPU as device batches takes
 * consecutive row groups up to maxPartitionBytes in one slice, since the GPU decodes a slice in
 * one call and pays per call and per task (TPC-H's partsupp at SF 30: 24 slices and tasks on 16
 * cores where whole files made 12, and its scan stages took twice the time).
 */
class ScanSliceSizeTest {
  @TempDir
  static Path dir;
  private static BlockServer server;
  private static SparkSession spark;
  private static int rowGroups;

  @BeforeAll
  static void start() throws Exception {
    spark = LocalSessions.builder("gpudirect-gpu-slices", 2).getOrCreate();
    // One file of several row groups of about 2 MiB: hashes do not compress.
    spark.range(0, 300_000, 1, 1).selectExpr("id", "sha2(cast(id AS string), 256) AS h").coalesce(1).write()
        .option("parquet.block.size", String.valueOf(2 << 20)).parquet(dir.resolve("t").toString());
    Path file;
    try (Stream<Path> files = Files.list(dir.resolve("t"))) {
      file = files.filter(f -> f.toString().endsWith(".parquet")).findFirst().orElseThrow();
    }
    try (ParquetFileReader r = ParquetFileReader.open(HadoopInputFile.fromPath(
        new org.apache.hadoop.fs.Path(file.toUri()), new Configuration()))) {
      rowGroups = r.getFooter().getBlocks().size();
    }
    assertTrue(rowGroups >= 3, "the file has " + rowGroups + " row groups; the test needs several");
    server = BlockServer.builder().root(dir).bindAddress("127.0.0.1").port(0).build().start();
  }

  @AfterAll
  static void stop() {
    LocalSessions.stop(spark, server);
  }

  @Test
  void aScanHandedToTheGpuTakesWholeRunsOfRowGroupsWhereTheHostReaderCutsThemPerCore() {
    // As many partitions asked for as there are row groups: the share is about one row group.
    spark.conf().set("spark.sql.files.minPartitionNum", String.valueOf(rowGroups));
    try {
      GpuDirectScan scan = scan();
      List<ParquetSlice> host = slices(scan.partitions(false));
      assertTrue(host.size() > 1, "the host reader's slices: " + host.size());
      assertTrue(host.stream().allMatch(s -> s.rowGroups() < rowGroups), "each a part of the file");

      InputPartition[] gpu = scan.partitions(true);
      List<ParquetSlice> whole = slices(gpu);
      assertEquals(1, gpu.length, "one task");
      assertEquals(1, whole.size(), "one slice");
      assertEquals(rowGroups, whole.get(0).rowGroups(), "every row group in it");
      assertEquals(host.stream().mapToLong(ParquetSlice::rows).sum(), whole.get(0).rows(), "the same rows");
    } finally {
      spark.conf().unset("spark.sql.files.minPartitionNum");
    }
  }

  @Test
  void sparksMaxPartitionBytesAppliesUnlessTheReadsOptionIsSet() {
    spark.conf().set("spark.sql.files.minPartitionNum", "1");
    spark.conf().set("spark.sql.files.maxPartitionBytes", "4m");
    try {
      int underSparks = slices(scan(Map.of()).partitions(false)).size();
      assertTrue(underSparks > 1, "runs cut at Spark's 4m: " + underSparks + " slices of " + rowGroups + " row groups");
      assertEquals(1, slices(scan(Map.of("maxPartitionBytes", "1g")).partitions(false)).size(),
          "the read's option over Spark's setting");
      spark.conf().set("spark.sql.files.maxPartitionBytes", "1g");
      assertEquals(1, slices(scan(Map.of()).partitions(false)).size(), "Spark's 1g: the whole file");
    } finally {
      spark.conf().unset("spark.sql.files.minPartitionNum");
      spark.conf().unset("spark.sql.files.maxPartitionBytes");
    }
  }

  private static GpuDirectScan scan() {
    return scan(Map.of());
  }

  private static GpuDirectScan scan(Map<String, String> options) {
    SparkPlan plan = spark.read().format("gpudirect").options(options)
        .load("gpudirect://127.0.0.1:" + server.port() + "/t").queryExecution().executedPlan();
    for (SparkPlan leaf : JavaConverters.seqAsJavaList(plan.collectLeaves())) {
      if (leaf instanceof BatchScanExec b && b.scan() instanceof GpuDirectScan s) {
        return s;
      }
    }
    throw new AssertionError("no gpudirect scan in " + plan);
  }

  private static List<ParquetSlice> slices(InputPartition[] partitions) {
    return Stream.of(partitions).flatMap(p -> ((GpuDirectPartition) p).slices().stream())
        .map(ParquetSlice.class::cast).toList();
  }
}
