package io.gpudirect.spark.tpch;

import io.gpudirect.bench.Cpu;
import io.trino.tpch.TpchEntity;
import io.trino.tpch.TpchTable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import java.util.stream.StreamSupport;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;

/**
 * The eight TPC-H tables at one scale factor as Parquet, one directory per table, made with
 * Trino's port of dbgen ({@code io.trino.tpch:tpch}) and cached: {@code ROOT/sf<SF>/} is reused
 * when its marker file names the same scale factor and generator, and made again otherwise.
 *
 * <p>The rows are the same on every machine for a scale factor (the generator, like dbgen, starts
 * a part by advancing its random streams to the part's first row, so a part is a range of the
 * same rows however many there are), and so is their split into files: one file per part, and
 * the number of parts of a table follows from its size alone. All parts of all tables are Spark
 * tasks of one local session, submitted together, so every core generates.
 */
final class TpchDataset {
  static final String MARKER = "_gpudirect_tpch";
  /** About 65 MB of Parquet for lineitem: SF 10 makes 30 of its files, SF 1 three. */
  static final long ROWS_PER_PART = 2_000_000;
  private static final String GENERATOR = "io.trino.tpch:tpch:1.2";
  /** Rows at SF 1, clause 4.2.5 of the specification; nation and region are fixed. */
  private static final Map<String, Long> ROWS_AT_SF1 = Map.of("lineitem", 6_000_000L, "orders", 1_500_000L,
      "partsupp", 800_000L, "part", 200_000L, "customer", 150_000L, "supplier", 10_000L, "nation", 25L, "region", 5L);

  private TpchDataset() {}

  /** The tables at {@code scaleFactor} under {@code root}: made now unless a complete copy is there. */
  static Path at(SparkSession spark, double scaleFactor, Path root) {
    if (!(scaleFactor > 0)) {
      throw new IllegalArgumentException("TPC-H scale factor " + scaleFactor + ": must be above 0 (1 is 1 GB of text, 310 MB of Parquet)");
    }
    Path dir = root.resolve("sf" + scaleName(scaleFactor));
    String marker = "scale factor " + scaleFactor + "\ngenerator " + GENERATOR + "\n";
    try {
      Path markerFile = dir.resolve(MARKER);
      if (Files.isRegularFile(markerFile) && Files.readString(markerFile, StandardCharsets.UTF_8).equals(marker)) {
        System.out.println("TPC-H SF " + scaleName(scaleFactor) + ": reusing " + dir);
        return dir;
      }
      Files.createDirectories(dir);
      Files.deleteIfExists(markerFile);
      long start = System.nanoTime();
      long cpu = Cpu.processNanos();
      generate(spark, scaleFactor, dir);
      Files.writeString(markerFile, marker, StandardCharsets.UTF_8);
      // the CPU seconds, which a machine with more cores divides among them
      System.out.printf("TPC-H SF %s: generated in %s in %.1f s (%.0f CPU s)%n", scaleName(scaleFactor), dir,
          (System.nanoTime() - start) / 1e9, (Cpu.processNanos() - cpu) / 1e9);
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot make the TPC-H tables in " + dir + ": " + e.getMessage()
          + " (-Dgpudirect.tpch.data names another directory)", e);
    }
  }

  /** 1 for 1.0, 0.01 for 0.01: as directory and file names show it. */
  static String scaleName(double scaleFactor) {
    return BigDecimal.valueOf(scaleFactor).stripTrailingZeros().toPlainString();
  }

  private static void generate(SparkSession spark, double scaleFactor, Path dir) throws IOException {
    List<TpchTable<?>> tables = new ArrayList<>(TpchTable.getTables());
    tables.sort(Comparator.comparingLong(t -> -ROWS_AT_SF1.get(t.getTableName())));
    ExecutorService submitters = Executors.newFixedThreadPool(tables.size());
    try {
      List<Future<?>> writes = new ArrayList<>();
      for (TpchTable<?> table : tables) {
        writes.add(submitters.submit(() -> write(spark, table, scaleFactor, dir.resolve(table.getTableName()))));
      }
      for (Future<?> w : writes) {
        w.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while generating TPC-H in " + dir, e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("Cannot generate TPC-H SF " + scaleFactor + " in " + dir + ": " + e.getCause(), e.getCause());
    } finally {
      submitters.shutdownNow();
    }
  }

  private static <E extends TpchEntity> void write(SparkSession spark, TpchTable<E> table, double scaleFactor, Path out) {
    String name = table.getTableName();
    int parts = (int) Math.max(1, Math.ceil(ROWS_AT_SF1.get(name) * scaleFactor / ROWS_PER_PART));
    List<Integer> numbers = IntStream.rangeClosed(1, parts).boxed().toList();
    // Only the table's name and numbers travel to the tasks: the generator is looked up there.
    var rows = JavaSparkContext.fromSparkContext(spark.sparkContext()).parallelize(numbers, parts)
        .flatMap(part -> rows(name, scaleFactor, part, parts));
    spark.createDataFrame(rows, TpchSchema.of(table)).write().mode(SaveMode.Overwrite).parquet(out.toString());
  }

  private static Iterator<Row> rows(String tableName, double scaleFactor, int part, int parts) {
    return rowsOf(TpchTable.getTable(tableName), scaleFactor, part, parts);
  }

  private static <E extends TpchEntity> Iterator<Row> rowsOf(TpchTable<E> table, double scaleFactor, int part, int parts) {
    return StreamSupport.stream(table.createGenerator(scaleFactor, part, parts).spliterator(), false)
        .map(e -> TpchSchema.row(table, e)).iterator();
  }
}
