package io.gpudirect.bench;

import io.gpudirect.remote.RemoteStores;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.apache.spark.sql.SparkSession;

/**
 * Spark end to end, host mode: the same aggregation over every column of the same Parquet
 * files, once through a {@code gpudirect} scan over loopback and once through
 * {@code spark.read.parquet} on the local files, interleaved; the Arrow IPC file over
 * gpudirect beside them.
 */
final class SparkScan implements AutoCloseable {
  private static final String QUERY = "SELECT count(*), sum(id), sum(amount), max(category) FROM %s";
  private final SparkSession spark;
  private final Path parquetDir;
  private final long parquetBytes;

  SparkScan(Path dir, long rows) throws IOException {
    spark = BenchSessions.local("gpudirect bench", 2, dir);
    parquetDir = dir.resolve("trips.parquet");
    writeDataset(spark, parquetDir, rows);
    parquetBytes = sizeOf(parquetDir);
  }

  /** The bench's dataset: {@code rows} rows in 8 Parquet files under {@code dir}. */
  static void writeDataset(SparkSession spark, Path dir, long rows) {
    spark.range(0, rows, 1, 8).selectExpr("id",
        "cast(rand(7) * 100 AS double) AS amount",
        "element_at(array('bike','bus','car','ferry','scooter','taxi','train','tram'), cast(id % 8 AS int) + 1) AS category")
        .write().parquet(dir.toString());
  }

  long parquetBytes() {
    return parquetBytes;
  }

  /** spark.read.parquet on the local files. */
  Measurement local() throws Exception {
    return time("parquet.`" + parquetDir + "`", parquetBytes);
  }

  /** The same files through a gpudirect scan of {@code base}/trips.parquet. */
  Measurement gpudirect(String base) throws Exception {
    spark.read().format("gpudirect").load(base + "/trips.parquet").createOrReplaceTempView("remote_trips");
    return time("remote_trips", parquetBytes);
  }

  /** An Arrow IPC file of {@code bytes} through a gpudirect scan. */
  Measurement gpudirectArrow(String uri, long bytes) throws Exception {
    spark.read().format("gpudirect").load(uri).createOrReplaceTempView("remote_arrow");
    return time("remote_arrow", bytes);
  }

  private Measurement time(String table, long bytes) throws Exception {
    return Measurement.of(() -> {
      spark.sql(String.format(QUERY, table)).collectAsList();
      return bytes;
    });
  }

  static long sizeOf(Path path) throws IOException {
    try (Stream<Path> walk = Files.walk(path)) {
      return walk.filter(Files::isRegularFile).filter(p -> p.toString().endsWith(".parquet"))
          .mapToLong(p -> p.toFile().length()).sum();
    }
  }

  @Override
  public void close() {
    spark.stop();
    RemoteStores.closeAll();
  }
}
