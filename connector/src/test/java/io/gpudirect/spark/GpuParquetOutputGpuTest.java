package io.gpudirect.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.Rmm;
import ai.rapids.cudf.RmmAllocationMode;
import io.gpudirect.dataset.DataFile;
import io.gpudirect.dataset.DatasetListing;
import io.gpudirect.gpu.GpuResources;
import io.gpudirect.gpu.GpuTest;
import io.gpudirect.hadoop.FileSystemConf;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.remote.RemoteStores;
import io.gpudirect.server.BlockServer;
import io.gpudirect.spark.cudf.DeviceColumn;
import io.gpudirect.spark.cudf.NotOnGpuException;
import io.gpudirect.spark.plan.FileSlice;
import io.gpudirect.spark.plan.ParquetPlanner;
import io.gpudirect.spark.plan.ParquetSlice;
import io.gpudirect.spark.read.GpuParquetSliceReader;
import io.gpudirect.spark.read.MultiRowGroupFile;
import io.gpudirect.spark.read.ParquetReadSettings;
import io.gpudirect.spark.read.ParquetSliceReaders;
import io.gpudirect.spark.read.SliceReader;
import io.gpudirect.testing.TestData;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * output=gpu against Spark's own Parquet reader: every file of testdata/parquet (and
 * the Parquet files of malformed/) is read both ways, slice by slice, and every row must be byte-identical once projected to
 * Spark's UnsafeRow. A file the host reader refuses must be refused on the GPU too; a file the
 * GPU path refuses must be refused with {@link NotOnGpuException}, naming why. A decoded
 * slice is charged to the device allocator while its batch is held. No device, pinned or RMM
 * byte, and no charge, may be left after each file.
 */
@GpuTest
class GpuParquetOutputGpuTest {
  private static Path testdata;
  private static BlockServer server;
  /** Serves a generated file of several row groups, which the shared files lack. */
  private static BlockServer generated;
  @org.junit.jupiter.api.io.TempDir static Path dir;

  @BeforeAll
  static void start() {
    if (!Rmm.isInitialized()) {
      Rmm.initialize(RmmAllocationMode.CUDA_DEFAULT, null, 0);
    }
    testdata = TestData.root();
    server = BlockServer.builder().root(testdata).port(0).build().start();
    try {
      MultiRowGroupFile.write(dir.resolve("trips.parquet"));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    generated = BlockServer.builder().root(dir).port(0).build().start();
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      RemoteStores.closeAll();
      server.close();
      generated.close();
    }
  }

  @Test
  void everyParquetFileGivesTheSameRowsOnTheGpuAsSparksReader() throws Exception {
    ResolvedOptions options = ResolvedOptions.resolve(Map.of("output", "gpu"), k -> null);
    SQLConf sql = new SQLConf();
    Configuration conf = FileSystemConf.set(new Configuration(false), options);
    ParquetPlanner planner = new ParquetPlanner(conf, sql);
    List<String> files = new ArrayList<>();
    try (Stream<Path> s = Files.list(testdata.resolve("parquet"))) {
      s.filter(p -> p.toString().endsWith(".parquet")).sorted().forEach(p ->
          files.add("gpudirect://127.0.0.1:" + server.port() + "/parquet/" + p.getFileName()));
    }
    files.add("gpudirect://127.0.0.1:" + generated.port() + "/trips.parquet");
    // The corrupt files: whatever Spark's reader does with them, the GPU path must match or refuse.
    try (Stream<Path> s = Files.list(testdata.resolve("malformed"))) {
      s.filter(p -> p.toString().endsWith(".parquet")).sorted().forEach(p ->
          files.add("gpudirect://127.0.0.1:" + server.port() + "/malformed/" + p.getFileName()));
    }
    int same = 0;
    List<String> refusedOnGpu = new ArrayList<>();
    List<String> refusedByBoth = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    for (String uri : files) {
      String path = uri.substring(uri.lastIndexOf('/') + 1);
      long rmmBefore = Rmm.getTotalBytesAllocated();
      DataFile file = DatasetListing.list(DatasetListing.locations(List.of(uri), options), options).get(0);
      StructType schema;
      try {
        schema = planner.inferSchema(file);
      } catch (RuntimeException e) {
        refusedByBoth.add(path + " (schema: " + e.getMessage() + ")");
        continue;
      }
      ParquetReadSettings settings = ParquetReadSettings.from(sql, schema);
      Configuration read = new Configuration(conf);
      ParquetPlanner.Counts counts = new ParquetPlanner.Counts();
      // Small slices, so that files with several row groups are cut and the footer rewrite is
      // exercised; each lists its column chunks, which the GPU reader fetches before decoding.
      List<FileSlice> slices = planner.slice(file, List.of(), 1, counts, schema);
      List<InternalRow> host = new ArrayList<>();
      List<InternalRow> gpu = new ArrayList<>();
      Throwable hostFailure = null;
      try {
        for (FileSlice s : slices) {
          readHost((ParquetSlice) s, read, settings, schema, host, settings.vectorized());
        }
      } catch (Exception | AssertionError e) {
        // Spark falls back to parquet-mr's row reader when vectorized reading is off: the reference too.
        host.clear();
        try {
          for (FileSlice s : slices) {
            readHost((ParquetSlice) s, read, settings, schema, host, false);
          }
        } catch (Exception | AssertionError e2) {
          hostFailure = e2;
        }
      }
      try {
        for (FileSlice s : slices) {
          try (GpuParquetSliceReader r = new GpuParquetSliceReader((ParquetSlice) s, RemoteStores.get(s.file().uri(), options), settings, schema)) {
            while (r.next()) {
              ColumnarBatch b = r.get();
              for (int c = 0; c < b.numCols(); c++) {
                assertTrue(b.column(c) instanceof DeviceColumn, "output=gpu gives cuDF-backed columns");
              }
              if (b.numCols() > 0 && b.numRows() > 0) {
                assertTrue(GpuResources.shared().device().accounts().outstandingBytes() > 0,
                    path + ": the decoded slice is charged to the device allocator while its batch is held");
              }
              collect(b, schema, gpu);
            }
          }
        }
        if (hostFailure != null) {
          problems.add(path + ": Spark's readers fail (" + hostFailure + ") but the GPU path returned rows");
        } else if (host.size() != gpu.size()) {
          problems.add(path + ": " + host.size() + " rows on the host, " + gpu.size() + " on the GPU");
        } else {
          int bad = -1;
          for (int i = 0; i < host.size() && bad < 0; i++) {
            bad = host.get(i).equals(gpu.get(i)) ? -1 : i;
          }
          if (bad >= 0) {
            problems.add(path + ": row " + bad + " of " + schema.simpleString() + " differs: host "
                + host.get(bad) + " gpu " + gpu.get(bad));
          } else {
            same++;
          }
        }
      } catch (NotOnGpuException e) {
        (hostFailure == null ? refusedOnGpu : refusedByBoth).add(path + " (" + e.getMessage() + ")");
      } catch (RuntimeException e) {
        if (hostFailure == null) {
          problems.add(path + ": Spark reads it but the GPU path fails: " + e);
          continue;
        }
        refusedByBoth.add(path + " (" + e.getMessage() + ")");
      }
      assertEquals(0, GpuResources.shared().pool().chunksInUse(), path + ": pinned chunks outstanding");
      // No CUDA error left behind: the device still runs work and the stream still syncs.
      ai.rapids.cudf.Cuda.DEFAULT_STREAM.sync();
      try (ai.rapids.cudf.ColumnVector v = ai.rapids.cudf.ColumnVector.fromInts(1, 2, 3);
           ai.rapids.cudf.Scalar sum = v.sum(ai.rapids.cudf.DType.INT64)) {
        assertEquals(6, sum.getLong(), path + ": the GPU still computes afterwards");
      }
      assertEquals(rmmBefore, Rmm.getTotalBytesAllocated(), path + ": RMM bytes outstanding");
      assertEquals(0, GpuResources.shared().device().accounts().outstandingBytes(),
          path + ": device bytes still charged to " + GpuResources.shared().device().accounts());
    }
    System.out.println("Parquet files identical on the GPU: " + same + " of " + files.size());
    refusedOnGpu.forEach(r -> System.out.println("  left to the host reader: " + r));
    refusedByBoth.forEach(r -> System.out.println("  refused by both paths: " + r));
    problems.forEach(p -> System.out.println("  PROBLEM " + p));
    assertTrue(problems.isEmpty(), problems.size() + " files differ: " + problems);
    assertTrue(same >= files.size() / 2, "most test files are served from the GPU: " + same + " of " + files.size());
  }

  private static void readHost(ParquetSlice slice, Configuration conf, ParquetReadSettings settings,
      StructType schema, List<InternalRow> out, boolean vectorized) throws Exception {
    if (vectorized) {
      try (SliceReader<ColumnarBatch> r = ParquetSliceReaders.columnar(slice, conf, settings)) {
        while (r.next()) {
          collect(r.get(), schema, out);
        }
      }
    } else {
      UnsafeProjection project = UnsafeProjection.create(schema);
      try (SliceReader<InternalRow> r = ParquetSliceReaders.rows(slice, conf, settings)) {
        while (r.next()) {
          out.add(project.apply(r.get()).copy());
        }
      }
    }
  }

  private static void collect(ColumnarBatch batch, StructType schema, List<InternalRow> out) {
    UnsafeProjection project = UnsafeProjection.create(schema);
    for (Iterator<InternalRow> rows = batch.rowIterator(); rows.hasNext(); ) {
      out.add(project.apply(rows.next()).copy());
    }
  }
}
