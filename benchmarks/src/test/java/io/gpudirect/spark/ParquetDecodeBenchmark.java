package io.gpudirect.spark;

import ai.rapids.cudf.BinaryOp;
import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.CompressionType;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.ParquetWriterOptions;
import ai.rapids.cudf.Rmm;
import ai.rapids.cudf.RmmAllocationMode;
import ai.rapids.cudf.Scalar;
import ai.rapids.cudf.Table;
import ai.rapids.cudf.TableWriter;
import io.gpudirect.dataset.DataFile;
import io.gpudirect.dataset.DatasetListing;
import io.gpudirect.hadoop.FileSystemConf;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.remote.RemoteStores;
import io.gpudirect.server.BlockServer;
import io.gpudirect.spark.plan.FileSlice;
import io.gpudirect.spark.plan.ParquetPlanner;
import io.gpudirect.spark.plan.ParquetSlice;
import io.gpudirect.spark.read.GpuParquetSliceReader;
import io.gpudirect.spark.read.ParquetReadSettings;
import io.gpudirect.spark.read.ParquetSliceReaders;
import io.gpudirect.spark.read.SliceReader;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Decides output=auto for Parquet on a GPU executor: the same remote Parquet slices read by
 * Spark's vectorized CPU decoder (host batches) and by cuDF on the GPU followed by the one
 * device-to-host copy a CPU consumer causes, through the same loopback server, at 1 and N
 * concurrent tasks. Not a test: run by hand on the GPU machine (staged with
 * {@code stage --cudf --module benchmarks}),
 * {@code run.sh java io.gpudirect.spark.ParquetDecodeBenchmark ROWS THREADS}; figures go to
 * docs/benchmarks.md.
 */
public final class ParquetDecodeBenchmark {
  public static void main(String[] args) throws Exception {
    long rows = args.length > 0 ? Long.parseLong(args[0]) : 20_000_000L;
    int[] threads = java.util.Arrays.stream((args.length > 1 ? args[1] : "1,4,16").split(","))
        .mapToInt(Integer::parseInt).toArray();
    Rmm.initialize(RmmAllocationMode.POOL, null, 8L << 30);
    Path dir = Files.createTempDirectory("gpudirect-decode");
    File file = dir.resolve("trips.parquet").toFile();
    write(file, rows);
    System.out.printf("file: %d rows, %.1f MB%n", rows, file.length() / 1e6);
    try (BlockServer server = BlockServer.builder().root(dir).port(0).build().start()) {
      String uri = "gpudirect://127.0.0.1:" + server.port() + "/trips.parquet";
      ResolvedOptions options = ResolvedOptions.resolve(Map.of("streams", "8", "output", "gpu"), k -> null);
      SQLConf sql = new SQLConf();
      Configuration conf = FileSystemConf.set(new Configuration(false), options);
      ParquetPlanner planner = new ParquetPlanner(conf, sql);
      DataFile f = DatasetListing.list(DatasetListing.locations(List.of(uri), options), options).get(0);
      StructType schema = planner.inferSchema(f);
      ParquetReadSettings settings = ParquetReadSettings.from(sql, schema);
      List<FileSlice> slices = planner.slice(f, List.of(), 64L << 20, new ParquetPlanner.Counts());
      System.out.println("schema " + schema.simpleString() + ", " + slices.size() + " slices");
      for (int round = 0; round < 2; round++) { // the first round warms both paths up
        for (int n : threads) {
          double cpu = run(n, slices, s -> {
            try (SliceReader<ColumnarBatch> r = ParquetSliceReaders.columnar(s, conf, settings)) {
              return consume(r);
            }
          });
          double gpu = run(n, slices, s -> {
            try (SliceReader<ColumnarBatch> r = new GpuParquetSliceReader(s, RemoteStores.get(s.file().uri(), options), settings, schema)) {
              return consume(r);
            }
          });
          double device = run(n, slices, s -> {
            try (GpuParquetSliceReader r = new GpuParquetSliceReader(s, RemoteStores.get(s.file().uri(), options), settings, schema)) {
              return r.next() ? r.get().numRows() : 0;
            }
          });
          if (round == 1) {
            double mb = file.length() / 1e6;
            System.out.printf("tasks %2d  cpu decode+read %7.0f MB/s  gpu decode+D2H+read %7.0f MB/s  ratio gpu/cpu %.2f"
                + "  (gpu decode alone %7.0f MB/s)%n", n, mb / cpu, mb / gpu, cpu / gpu, mb / device);
          }
        }
      }
      RemoteStores.closeAll();
    }
    file.delete();
  }

  interface SliceRead {
    long read(ParquetSlice slice) throws Exception;
  }

  /** Seconds to read every slice with {@code n} tasks at once. */
  private static double run(int n, List<FileSlice> slices, SliceRead read) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      long start = System.nanoTime();
      List<Future<Long>> done = new ArrayList<>();
      for (FileSlice s : slices) {
        done.add(pool.submit(() -> read.read((ParquetSlice) s)));
      }
      long rows = 0;
      for (Future<Long> d : done) {
        rows += d.get();
      }
      if (rows == 0) {
        throw new IllegalStateException("no rows");
      }
      return (System.nanoTime() - start) / 1e9;
    } finally {
      pool.shutdown();
    }
  }

  /**
   * What a CPU consumer does: read every value of every column through Spark's getters (the
   * first of which brings a GPU batch to the host), as a whole-stage-codegen scan would.
   */
  private static long consume(SliceReader<ColumnarBatch> r) throws Exception {
    long rows = 0;
    long checksum = 0;
    while (r.next()) {
      ColumnarBatch b = r.get();
      int n = b.numRows();
      org.apache.spark.sql.vectorized.ColumnVector id = b.column(0);
      org.apache.spark.sql.vectorized.ColumnVector amount = b.column(1);
      org.apache.spark.sql.vectorized.ColumnVector passengers = b.column(2);
      org.apache.spark.sql.vectorized.ColumnVector zone = b.column(3);
      org.apache.spark.sql.vectorized.ColumnVector day = b.column(4);
      for (int i = 0; i < n; i++) {
        checksum += id.getLong(i) + (long) amount.getDouble(i) + passengers.getInt(i)
            + zone.getUTF8String(i).numBytes() + day.getInt(i);
      }
      rows += n;
    }
    if (checksum == 42) {
      System.out.print("");
    }
    return rows;
  }

  /** A trips-like table: ids, amounts, counts, a low-cardinality string and a date. */
  private static void write(File file, long rows) {
    ParquetWriterOptions options = ParquetWriterOptions.builder()
        .withNonNullableColumns("id", "amount", "passengers", "zone", "day")
        .withCompressionType(CompressionType.SNAPPY)
        .withRowGroupSizeRows(4_000_000)
        .build();
    int batch = 4_000_000;
    try (TableWriter w = Table.writeParquetChunked(options, file)) {
      for (long at = 0; at < rows; at += batch) {
        int n = (int) Math.min(batch, rows - at);
        try (Scalar start = Scalar.fromLong(at);
             ColumnVector id = ColumnVector.sequence(start, n);
             Scalar k = Scalar.fromLong(1000);
             Scalar scale = Scalar.fromDouble(0.37);
             ColumnVector mod = id.binaryOp(BinaryOp.PYMOD, k, DType.INT64);
             ColumnVector amount = id.binaryOp(BinaryOp.MUL, scale, DType.FLOAT64);
             ColumnVector passengers = mod.castTo(DType.INT32);
             ColumnVector zone = mod.castTo(DType.STRING);
             ai.rapids.cudf.ColumnView days = passengers.bitCastTo(DType.TIMESTAMP_DAYS);
             ColumnVector day = days.copyToColumnVector();
             Table t = new Table(id, amount, passengers, zone, day)) {
          w.write(t);
        }
      }
    }
  }
}
