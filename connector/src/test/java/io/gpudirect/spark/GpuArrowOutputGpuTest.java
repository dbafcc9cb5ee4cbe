package io.gpudirect.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.Rmm;
import ai.rapids.cudf.RmmAllocationMode;
import io.gpudirect.dataset.DataFile;
import io.gpudirect.dataset.DataFormat;
import io.gpudirect.dataset.DatasetListing;
import io.gpudirect.gpu.GpuResources;
import io.gpudirect.gpu.GpuTest;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.remote.RemoteStores;
import io.gpudirect.server.BlockServer;
import io.gpudirect.spark.cudf.DeviceColumn;
import io.gpudirect.spark.plan.ArrowPlanner;
import io.gpudirect.spark.plan.ArrowSlice;
import io.gpudirect.spark.plan.FileSlice;
import io.gpudirect.spark.read.ArrowSliceReader;
import io.gpudirect.spark.read.GpuArrowSliceReader;
import io.gpudirect.testing.TestData;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * output=gpu for Arrow IPC against the host path: every file and stream of
 * testdata/arrow is read both ways, slice by slice (one record batch each), and
 * every row must be byte-identical as a Spark UnsafeRow. A file the GPU path refuses must be
 * refused with a message naming the file or column; nothing may be left on the device.
 */
@GpuTest
class GpuArrowOutputGpuTest {
  private static Path testdata;
  private static BlockServer server;

  @BeforeAll
  static void start() {
    if (!Rmm.isInitialized()) {
      Rmm.initialize(RmmAllocationMode.CUDA_DEFAULT, null, 0);
    }
    testdata = TestData.root();
    server = BlockServer.builder().root(testdata).port(0).build().start();
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      RemoteStores.closeAll();
      server.close();
    }
  }

  @Test
  void everyArrowFileGivesTheSameRowsOnTheGpuAsOnTheHost() throws Exception {
    ResolvedOptions options = ResolvedOptions.resolve(Map.of("output", "gpu"), k -> null);
    List<String> names;
    try (Stream<Path> s = Files.list(testdata.resolve("arrow"))) {
      names = s.map(p -> p.getFileName().toString()).filter(n -> DataFormat.fromExtension(n) != null).sorted().toList();
    }
    int same = 0;
    List<String> refused = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    for (String name : names) {
      String uri = "gpudirect://127.0.0.1:" + server.port() + "/arrow/" + name;
      long rmmBefore = Rmm.getTotalBytesAllocated();
      DataFile file = DatasetListing.list(DatasetListing.locations(List.of(uri), options), options).get(0);
      StructType schema;
      List<FileSlice> slices;
      List<InternalRow> host = new ArrayList<>();
      try {
        schema = ArrowPlanner.schema(file, options);
        slices = ArrowPlanner.slice(file, options, 1);
        for (FileSlice s : slices) {
          try (ArrowSliceReader r = new ArrowSliceReader((ArrowSlice) s, RemoteStores.get(s.file().uri(), options), schema)) {
            while (r.next()) {
              collect(r.get(), schema, host);
            }
          }
        }
      } catch (RuntimeException e) {
        refused.add(name + " (host: " + e.getMessage() + ")");
        continue;
      }
      if (schema.fields().length == 0) {
        continue;
      }
      List<InternalRow> gpu = new ArrayList<>();
      try {
        for (FileSlice s : slices) {
          try (GpuArrowSliceReader r = new GpuArrowSliceReader((ArrowSlice) s, RemoteStores.get(s.file().uri(), options), schema)) {
            while (r.next()) {
              ColumnarBatch b = r.get();
              assertTrue(b.column(0) instanceof DeviceColumn);
              if (b.numRows() > 0) {
                assertTrue(GpuResources.shared().device().accounts().outstandingBytes() > 0,
                    name + ": the slice's device memory is charged while its batch is held");
              }
              collect(b, schema, gpu);
            }
          }
        }
        if (host.size() != gpu.size()) {
          problems.add(name + ": " + host.size() + " rows on the host, " + gpu.size() + " on the GPU");
        } else {
          int bad = -1;
          for (int i = 0; i < host.size() && bad < 0; i++) {
            bad = host.get(i).equals(gpu.get(i)) ? -1 : i;
          }
          if (bad >= 0) {
            problems.add(name + ": row " + bad + " of " + schema.simpleString() + " differs: host " + host.get(bad)
                + " gpu " + gpu.get(bad));
          } else {
            same++;
          }
        }
      } catch (RuntimeException e) {
        String m = String.valueOf(e.getMessage());
        if (m.contains(name) || m.contains("Column '") || m.contains("column")) {
          refused.add(name + " (" + m + ")");
        } else {
          problems.add(name + ": refused without naming what: " + e);
        }
      }
      assertEquals(0, GpuResources.shared().pool().chunksInUse(), name + ": pinned chunks outstanding");
      assertEquals(rmmBefore, Rmm.getTotalBytesAllocated(), name + ": RMM bytes outstanding");
      assertEquals(0, GpuResources.shared().device().accounts().outstandingBytes(),
          name + ": device bytes still charged to " + GpuResources.shared().device().accounts());
    }
    System.out.println("Arrow files identical on the GPU: " + same + " of " + names.size());
    refused.forEach(r -> System.out.println("  refused: " + r));
    problems.forEach(p -> System.out.println("  PROBLEM " + p));
    assertTrue(problems.isEmpty(), problems.size() + " files differ: " + problems);
    assertTrue(same > 0, "some files are served from the GPU");
  }

  private static void collect(ColumnarBatch batch, StructType schema, List<InternalRow> out) {
    UnsafeProjection project = UnsafeProjection.create(schema);
    for (Iterator<InternalRow> rows = batch.rowIterator(); rows.hasNext(); ) {
      out.add(project.apply(rows.next()).copy());
    }
  }
}
