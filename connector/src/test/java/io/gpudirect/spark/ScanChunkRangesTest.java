package io.gpudirect.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.gpudirect.server.BlockServer;
import io.gpudirect.spark.plan.FileSlice;
import io.gpudirect.spark.plan.GpuDirectPartition;
import io.gpudirect.spark.plan.ParquetSlice;
import io.gpudirect.testing.TestData;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import scala.collection.JavaConverters;

/**
 * A Parquet slice lists the byte ranges of the column chunks its query reads wherever something
 * fetches them ahead: the GPU reader fetches them into device memory before the engine admits
 * its decode (output auto or gpu), and read-ahead fetches them on the host. Without the list
 * the GPU reader fetched nothing ahead and decoded under the engine's admission as before.
 */
class ScanChunkRangesTest {
  private static final String FILE = "alltypes_plain.parquet";
  private static BlockServer server;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    server = BlockServer.builder().root(TestData.root().resolve("parquet")).bindAddress("127.0.0.1").port(0)
        .build().start();
    spark = LocalSessions.builder("gpudirect-chunk-ranges", 2).getOrCreate();
  }

  @AfterAll
  static void stop() {
    LocalSessions.stop(spark, server);
  }

  @Test
  void slicesListTheChunksOfTheColumnsReadWhereTheGpuMayDecode() throws Exception {
    long[] expected = chunks(TestData.root().resolve("parquet").resolve(FILE), Set.of("id", "double_col"));
    for (String output : List.of("auto", "gpu")) {
      assertEquals(Arrays.toString(expected), Arrays.toString(ranges(output, "0")), "output=" + output);
    }
    assertEquals(Arrays.toString(expected), Arrays.toString(ranges("host", "4m")), "output=host with read-ahead");
    assertNull(ranges("host", "0"), "output=host without read-ahead: nothing fetches them ahead");
  }

  /** The chunk ranges of the scan's one slice, reading two columns. */
  private static long[] ranges(String output, String readAhead) {
    SparkPlan plan = spark.read().format("gpudirect").option("output", output).option("readAhead", readAhead)
        .load("gpudirect://127.0.0.1:" + server.port() + "/" + FILE).selectExpr("id", "double_col")
        .queryExecution().executedPlan();
    List<FileSlice> slices = new ArrayList<>();
    for (SparkPlan leaf : JavaConverters.seqAsJavaList(plan.collectLeaves())) {
      if (leaf instanceof BatchScanExec b) {
        for (InputPartition p : b.batch().planInputPartitions()) {
          slices.addAll(((GpuDirectPartition) p).slices());
        }
      }
    }
    assertEquals(1, slices.size(), "slices of " + FILE);
    return ((ParquetSlice) slices.get(0)).chunkRanges();
  }

  /** Offset and length pairs of {@code columns}' chunks in the file, in file order, touching ones merged. */
  private static long[] chunks(Path file, Set<String> columns) throws Exception {
    List<long[]> found = new ArrayList<>();
    try (ParquetFileReader r = ParquetFileReader.open(HadoopInputFile.fromPath(
        new org.apache.hadoop.fs.Path(file.toUri()), new Configuration()))) {
      for (BlockMetaData b : r.getFooter().getBlocks()) {
        for (ColumnChunkMetaData c : b.getColumns()) {
          if (columns.contains(c.getPath().toArray()[0])) {
            found.add(new long[] {c.getStartingPos(), c.getTotalSize()});
          }
        }
      }
    }
    found.sort(Comparator.comparingLong(c -> c[0]));
    List<Long> merged = new ArrayList<>();
    for (long[] c : found) {
      int last = merged.size() - 2;
      if (last >= 0 && merged.get(last) + merged.get(last + 1) == c[0]) {
        merged.set(last + 1, merged.get(last + 1) + c[1]);
      } else {
        merged.add(c[0]);
        merged.add(c[1]);
      }
    }
    return merged.stream().mapToLong(Long::longValue).toArray();
  }
}
