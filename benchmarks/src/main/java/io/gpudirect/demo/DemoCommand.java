package io.gpudirect.demo;

import io.gpudirect.cli.BenchmarksCommand;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.remote.RemoteStores;
import io.gpudirect.server.BlockServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The main job: writes a sample dataset in Parquet and Arrow IPC, serves it from an embedded
 * server on loopback, queries it with a local Spark over gpudirect://, and checks the answer
 * against Spark's own Parquet reader on the same files.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = "Serve a generated dataset on loopback and query it with local Spark over gpudirect://.")
public final class DemoCommand implements Callable<Integer>, BenchmarksCommand {
  @Option(names = "--rows", defaultValue = "8000000", description = "Rows of the Parquet dataset (default ${DEFAULT-VALUE}).")
  long rows;

  @Option(names = "--keep", description = "Keep the generated data directory.")
  boolean keep;

  private static final String QUERY = "SELECT category, count(*) AS trips, cast(sum(amount) AS decimal(18, 2)) AS revenue,"
      + " round(avg(distance), 3) AS avg_distance FROM %s GROUP BY category ORDER BY category";

  @Override
  public Integer call() throws Exception {
    Path dir = Files.createTempDirectory("gpudirect-demo");
    SparkSession spark = SparkSession.builder()
        .appName("gpudirect demo")
        .master("local[*]")
        .config("spark.ui.enabled", "false")
        // Spark's own bar, on a terminal only: in a file each redraw would stay.
        .config("spark.ui.showConsoleProgress", String.valueOf(System.console() != null))
        .config("spark.sql.shuffle.partitions", "4")
        // Made at the first query, by default as spark-warehouse/ in the caller's directory: here
        // it goes with the demo's data, and is deleted with it.
        .config("spark.sql.warehouse.dir", dir.resolve("spark-warehouse").toString())
        .getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    try {
      say("Writing %,d rows of Parquet and %,d rows of Arrow IPC to %s", rows, rows / 2, dir);
      spark.range(0, rows, 1, 8).selectExpr(
          "id AS trip_id",
          "element_at(array('bike','bus','car','ferry','scooter','taxi','train','tram'), cast(id % 8 AS int) + 1) AS category",
          "cast(rand(7) * 100 AS double) AS amount",
          "cast(rand(11) * 40 AS float) AS distance",
          "timestamp_seconds(1700000000 + id) AS started_at")
          .write().parquet(dir.resolve("trips.parquet").toString());
      SampleArrowWriter.write(dir.resolve("trips.arrow"), rows / 2);
      say("Wrote %,.1f MB of Parquet and %,.1f MB of Arrow IPC", sizeOf(dir.resolve("trips.parquet")) / 1e6,
          sizeOf(dir.resolve("trips.arrow")) / 1e6);

      try (BlockServer server = BlockServer.builder().root(dir).bindAddress("127.0.0.1").port(0).build()) {
        server.start();
        String base = "gpudirect://127.0.0.1:" + server.port();
        say("Embedded gpudirect server listening on 127.0.0.1:%d, serving %s", server.port(), dir);
        RemoteStore store = RemoteStores.get(GpuDirectUri.parse(base + "/"), ResolvedOptions.resolve(Map.of(),
            key -> spark.conf().contains(key) ? spark.conf().get(key) : null));

        // The reference runs first, so it pays for the JVM's and Spark's warm-up, not us.
        long start = System.nanoTime();
        List<Row> reference = spark.sql(String.format(QUERY,
            "parquet.`" + dir.resolve("trips.parquet") + "`")).collectAsList();
        double referenceSeconds = (System.nanoTime() - start) / 1e9;
        List<Row> parquet = run(spark, server, base + "/trips.parquet", store);
        say("Same rows as spark.read.parquet on the local files: %s (that query took %.2f s)",
            parquet.equals(reference) ? "yes" : "NO", referenceSeconds);
        run(spark, server, base + "/trips.arrow", store);
        if (!parquet.equals(reference)) {
          return 2;
        }
      }
      return 0;
    } finally {
      spark.stop();
      RemoteStores.closeAll();
      if (keep) {
        say("Kept %s", dir);
      } else {
        deleteRecursively(dir);
      }
    }
  }

  private static List<Row> run(SparkSession spark, BlockServer server, String uri, RemoteStore store) {
    say("%nQuery over %s", uri);
    Dataset<Row> df = spark.read().format("gpudirect").load(uri);
    df.createOrReplaceTempView("trips");
    long bytesBefore = server.stats().bytesSent();
    long start = System.nanoTime();
    Dataset<Row> query = spark.sql(String.format(QUERY, "trips"));
    List<Row> result = query.collectAsList();
    double seconds = (System.nanoTime() - start) / 1e9;
    long bytes = server.stats().bytesSent() - bytesBefore;
    spark.createDataFrame(result, query.schema()).show(false);
    say("Moved %,.1f MB in %.2f s (%,.0f MB/s end to end, including Spark's decode and aggregation)",
        bytes / 1e6, seconds, bytes / 1e6 / seconds);
    say("Transport: %s (%s)", store.transport(), store.transportReason());
    return result;
  }

  private static void say(String format, Object... args) {
    System.out.println(String.format(format, args));
  }

  private static long sizeOf(Path path) throws IOException {
    try (Stream<Path> walk = Files.walk(path)) {
      return walk.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
    }
  }

  private static void deleteRecursively(Path dir) throws IOException {
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
